#!/usr/bin/env python3
"""Build the labelled PII set: real sentences and code carrying realistic PII in en, de, fr, zh and ja, and decoys
that must not be flagged, every one a labelled character span.

Carrier text is real: sentences of the Debian FAQ and the Debian Administrator's Handbook in all five languages and of
the Jargon File (English), read from the demo corpus (pretrain_core/data/demo) by the pipeline's own ingestion, and
windows of the demo corpus's code files. None of these documents is among the PII tagger's training sources (licences,
Vim tutors, CPython's CJK texts and manual pages, see `TaggerBuild.sources` in `pretrain_eval/pii_tagger/build.py`), and
any sentence that also occurs there is dropped, so no carrier sentence was trained on. Sentences that mention a real
person, an email address or an IP address are left out, so everything personal in an item is labelled.

Into a passage of one or two consecutive sentences, the builder puts a value through a short frame written for this
set in the passage's language ("{s} Sie erreichen uns unter {phone}."). The frames are not the tagger's training
frames (`pretrain_core/pii/training_data.py`; `tests/eval/stage_quality/test_pii.py` checks they share none). Values:

- person names: surnames and given names from mimesis's locale data (an independent name source: the tagger's
  name lists come from Faker) and from Faker's held-out name split (names the tagger never saw in an example);
  written as each language writes them (title + surname, initials, CJK surname-first without spaces, Japanese
  surname alone before さん);
- street addresses: Faker locales the tagger is not trained on (en_IE, en_AU, en_CA, en_NZ, de_AT, de_CH, fr_CH,
  zh_TW) and mimesis addresses, plus Faker's training locales under a different seed;
- structured values generated to their real rules: phones in national and international formats of each country
  (US/UK, DE, FR, CN, JP numbering plans), public IPv4 and global IPv6 addresses, Luhn-valid card numbers of
  real networks, IBANs with valid mod-97 checks, national ids with valid checks (US SSN, UK NINO, DE Steuer-ID,
  FR NIR, CN resident id, JP My Number), emails, and keys and tokens (AWS, GitHub, JWT, Slack, Google, Stripe,
  private key blocks, passwords in config lines);
- decoys: ISBNs (valid checks), dates, times, version strings, UUIDs, git hashes, hex colours, Luhn-invalid card-
  like digit runs, order numbers and line numbers.

About a third of the frames of each kind and language, and the sentences and names used with them, are marked
`dev`: only those items were looked at while improving the stage; the `test` items stay unseen.

Determinism: sources are read in sorted order, every random choice comes from generators seeded by a fixed string,
and the output is written with sorted keys. `--check` rebuilds into a temporary directory and compares bytes.

    python scripts/build_labelled_pii.py          # writes data/labelled/pii/
    python scripts/build_labelled_pii.py --check  # rebuild and compare bytes

Needs the project's environment plus mimesis (`pip install mimesis`), used only here.
"""

from __future__ import annotations

import base64
import datetime
import gzip
import hashlib
import ipaddress
import itertools
import json
import random
import re
import string
import sys
import uuid
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import mimesis
from faker import Faker
from mimesis.locales import Locale
from rebuild import build_or_check  # scripts/rebuild.py: scripts/ is on sys.path when run

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from pretrain_core.config import load_config  # noqa: E402
from pretrain_core.ingest.config import IngestConfig  # noqa: E402
from pretrain_core.ingest.listing import list_source_files  # noqa: E402
from pretrain_core.ingest.stage import ingest_files  # noqa: E402
from pretrain_core.pii.config import PII_TYPES  # noqa: E402
from pretrain_eval.pii_tagger.build import TaggerBuild  # noqa: E402
from pretrain_eval.pii_tagger.names import faker_names, name_lists  # noqa: E402
from pretrain_eval.pii_tagger.text_sources import load_sentences, sentence_language, sentences_of  # noqa: E402
from pretrain_eval.pii_tagger.training_data import _split_of  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "data" / "labelled" / "pii"
SET_FILE = "items.jsonl.gz"
SEED = "pretrain-pii-v1"
LANGS = ("en", "de", "fr", "zh", "ja")
CJK = ("zh", "ja")
CARRIER_SOURCES = {"debian_faq_web": LANGS, "debian_handbook": LANGS, "jargon_en": ("en",)}
CODE_EXTENSIONS = {".py": "python", ".c": "c", ".h": "c", ".js": "javascript", ".sh": "shell"}
DEV_EVERY = 3  # frame i of a kind is a dev frame when i % 3 == 0

# Items per language and kind (a frame may hold more than one value, so value counts are somewhat higher).
COUNTS = {
    "email": 40, "phone": 90, "ip": 40, "card": 40, "iban": 40, "national_id": 50, "secret": 40,
    "person": 220, "address": 110, "decoy": 24, "clean": 150,
}  # fmt: skip
CODE_COUNTS = {"secret": 130, "email": 40, "ip": 40, "decoy": 12, "clean": 40}
DECOY_SLOTS = (
    "isbn", "date", "time", "version", "uuid", "git_hash", "hex_colour", "luhn_invalid", "order_number", "line_number",
)  # fmt: skip
CODE_DECOYS = ("version", "uuid", "git_hash", "hex_colour", "line_number", "date")

# People who are named in the carrier documents (credits, history): their sentences are left out.
REAL_PEOPLE = re.compile(
    r"Murdock|Stallman|Torvalds|Perens|Raboud|Santiago Vila|Rodin|Sanguino|Britz|Golde|Beyersdorf|Schröder|Wansing|"
    r"Hiereth|Rudolph|Srivastava|Manterola|Venema|Macdonald|Hertzog|Mas\b|Garbee|Raymond|Knuth|Ritchie|Thompson|"
    r"Kernighan|Steele|McCarthy|Minsky|Stoll|Gosper|Dijkstra|Wirth|Tanenbaum|Stroustrup|Lovelace|Babbage|Turing|"
    r"Richard M|Eric S|Guy L|von Neumann|默多克|斯托曼|托瓦兹|マードック|ストールマン|トーバルズ"
)
# Transliterated foreign names: katakana or Han runs joined by a middle dot.
_DOTTED_NAME = re.compile(r"[\u30a0-\u30ff\u4e00-\u9fff]+[・·•][\u30a0-\u30ff\u4e00-\u9fff]+")
_IP_LIKE = re.compile(r"\d+\.\d+\.\d+\.\d+|[0-9a-fA-F]{1,4}::?[0-9a-fA-F]{1,4}:")
_CAPITALISED = re.compile(r"[^\W\d_]+")

# Frames per language and kind. {s} is the passage, {s_lower} the passage with a lower-case first letter; a frame
# without either goes before or after the passage. Every other {slot} gets a generated value ({person2}: a second
# person). Person, address and contact frames avoid the tagger's training frames on purpose.
FRAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "email": (
            "{s} For questions, write to {email}.",
            "Contact: {email}",
            "{s} (reach me at <{email}>)",
            "Please send your patches to {email} rather than opening a ticket. {s}",
            "{s} To unsubscribe, mail {email} with the word 'remove' in the subject.",
            "Reply-To: {email}\n\n{s}",
        ),
        "phone": (
            "{s} Call us on {phone} between 9 am and 5 pm.",
            "Phone: {phone}\n{s}",
            "{s} Our hotline ({phone}) is staffed around the clock.",
            "If the build farm is down, ring {phone}. {s}",
            "{s} Mobile {phone}",
            "{s} You can reach the office at {phone} or by fax.",
            "{s} Text me at {phone} when you arrive.",
            "Tel. {phone} | {s}",
            "{s} The on-call engineer's number is {phone}.",
        ),
        "ip": (
            "{s} The mirror at {ip} was unreachable for two hours.",
            "Requests from {ip} were blocked by the firewall. {s}",
            "{s} (client address {ip})",
            "Failed password for root from {ip} port 22 ssh2\n{s}",
            "{s} Point the A record of the host to {ip}.",
            "{s} Our logs show repeated scans coming from {ip}.",
        ),
        "card": (
            "{s} Card number: {card}, expires 09/27.",
            "I paid with my card {card} and was charged twice. {s}",
            "{s} Please charge the registration fee to {card}.",
            "Credit card: {card}\n{s}",
            "{s} The donation was made with the Visa card {card}.",
            "{s} Payment method: {card}",
        ),
        "iban": (
            "{s} Please transfer the amount to IBAN {iban}.",
            "Bank details: {iban} (BIC DEUTDEFF)\n{s}",
            "{s} Donations go to the account {iban}.",
            "IBAN: {iban}\n{s}",
            "{s} Refunds are paid into {iban} within ten days.",
            "{s} Beneficiary account: {iban}",
        ),
        "national_id": (
            "{s} SSN: {ssn}",
            "My social security number is {ssn}. {s}",
            "{s} National Insurance number: {nino}",
            "Employee record, SSN {ssn}\n{s}",
            "{s} Her NI number is {nino}.",
            "{s} (Social Security No. {ssn})",
        ),
        "secret": (
            "{s} The deploy key is {secret}.",
            "I accidentally pushed my token {secret} to a public repository. {s}",
            "{s}\n\n    export API_TOKEN={secret}",
            "{s} Use the credentials below:\n    access_key: {secret}",
            "{s} (revoked key: {secret})",
            "{s} Authorization: Bearer {secret}",
        ),
        "person": (
            "{s} This section was reviewed by {person}.",
            "{person} pointed out in the mailing list discussion that {s_lower}",
            "As {person} explained in her talk, {s_lower}",
            "{s} Questions about it can be sent to {person}, the release coordinator.",
            "{s}\n-- {person}",
            "Reported-by: {person}\n\n{s}",
            "{person} and {person2} both suggested the following. {s}",
            "Last week I met {person} at the conference; {s_lower}",
            "Minutes taken by {person}. {s}",
            "{s} (Translation: {person})",
            "{s} I asked {person} whether this still applies, and she said it does.",
            "{s}\n\nBest regards,\n{person}\n{address}\nPhone: {phone}",
            "From: {person} <{email}>\n\n{s}",
            "{s} Many thanks to {person}, who tested the patch on three machines.",
        ),
        "address": (
            "{s} Our mailing address is {address}.",
            "Registered office: {address}. {s}",
            "{s}\n\n{person}\n{address_lines}",
            "The meetup takes place at {address}; {s_lower}",
            "{s} Returns should be posted to {address}.",
            "Billing address: {address}\n{s}",
            "{s} The new office is located at {address}, on the second floor.",
        ),
    },
    "de": {
        "email": (
            "{s} Bei Fragen schreiben Sie an {email}.",
            "Kontakt: {email}",
            "{s} (erreichbar unter <{email}>)",
            "Bitte schicken Sie Patches an {email} statt ein Ticket zu eröffnen. {s}",
            "{s} Zum Abbestellen genügt eine Mail an {email}.",
            "Antwort an: {email}\n\n{s}",
        ),
        "phone": (
            "{s} Sie erreichen uns unter {phone}.",
            "Tel.: {phone}\n{s}",
            "{s} Unsere Hotline {phone} ist rund um die Uhr besetzt.",
            "Rufen Sie bei Problemen {phone} an. {s}",
            "{s} Mobil: {phone}",
            "{s} Telefonisch unter {phone} oder per Fax.",
            "{s} Für Rückfragen: {phone} (Mo–Fr 9–17 Uhr).",
            "Telefon {phone} | {s}",
            "{s} Die Bereitschaftsnummer lautet {phone}.",
        ),
        "ip": (
            "{s} Der Spiegelserver {ip} war zwei Stunden lang nicht erreichbar.",
            "Anfragen von {ip} wurden von der Firewall blockiert. {s}",
            "{s} (Client-Adresse {ip})",
            "Failed password for root from {ip} port 22 ssh2\n{s}",
            "{s} Der A-Eintrag des Rechners muss auf {ip} zeigen.",
            "{s} In den Protokollen tauchen wiederholt Scans von {ip} auf.",
        ),
        "card": (
            "{s} Kartennummer: {card}, gültig bis 09/27.",
            "Ich habe mit meiner Karte {card} bezahlt und wurde doppelt belastet. {s}",
            "{s} Bitte buchen Sie die Gebühr von {card} ab.",
            "Kreditkarte: {card}\n{s}",
            "{s} Die Spende erfolgte mit der Visa-Karte {card}.",
            "{s} Zahlungsmittel: {card}",
        ),
        "iban": (
            "{s} Bitte überweisen Sie den Betrag auf IBAN {iban}.",
            "Bankverbindung: {iban} (BIC COBADEFFXXX)\n{s}",
            "{s} Spenden bitte auf das Konto {iban}.",
            "IBAN: {iban}\n{s}",
            "{s} Erstattungen gehen innerhalb von zehn Tagen an {iban}.",
            "{s} Empfängerkonto: {iban}",
        ),
        "national_id": (
            "{s} Steuer-ID: {taxid}",
            "Meine Steueridentifikationsnummer lautet {taxid}. {s}",
            "{s} Identifikationsnummer (IdNr.): {taxid}",
            "Personalakte, Steuer-ID {taxid}\n{s}",
            "{s} Ihre steuerliche Identifikationsnummer ist {taxid}.",
            "{s} (Steuer-Identifikationsnummer {taxid})",
        ),
        "secret": (
            "{s} Der Deploy-Schlüssel lautet {secret}.",
            "Ich habe versehentlich mein Token {secret} in ein öffentliches Repository gepusht. {s}",
            "{s}\n\n    export API_TOKEN={secret}",
            "{s} Zugangsdaten:\n    access_key: {secret}",
            "{s} (widerrufener Schlüssel: {secret})",
            "{s} Authorization: Bearer {secret}",
        ),
        "person": (
            "{s} Dieser Abschnitt wurde von {person} überarbeitet.",
            "Wie {person} auf der Mailingliste anmerkte: {s}",
            "{s} Fragen dazu beantwortet {person} aus dem Release-Team.",
            "{s}\n\nMit freundlichen Grüßen\n{person}",
            "Protokoll: {person}. {s}",
            "{person} und {person2} haben Folgendes vorgeschlagen. {s}",
            "Letzte Woche habe ich {person} auf der Konferenz getroffen. {s}",
            "{s} (Übersetzung: {person})",
            "{s} Ich habe {person} gefragt, ob das noch gilt.",
            "{s}\n\nViele Grüße\n{person}\n{address}\nTel. {phone}",
            "Von: {person} <{email}>\n\n{s}",
            "{s} Vielen Dank an {person}, die den Patch auf drei Rechnern getestet hat.",
            "Ansprechpartnerin ist {person}. {s}",
        ),
        "address": (
            "{s} Unsere Postanschrift lautet: {address}.",
            "Sitz der Gesellschaft: {address}. {s}",
            "{s}\n\n{person}\n{address_lines}",
            "Das Treffen findet in der {address} statt. {s}",
            "{s} Rücksendungen bitte an: {address}",
            "Rechnungsanschrift: {address}\n{s}",
            "{s} Das neue Büro befindet sich in der {address}, zweiter Stock.",
        ),
    },
    "fr": {
        "email": (
            "{s} Pour toute question, écrivez à {email}.",
            "Contact : {email}",
            "{s} (joignable à <{email}>)",
            "Merci d'envoyer vos correctifs à {email} plutôt que d'ouvrir un ticket. {s}",
            "{s} Pour vous désabonner, écrivez à {email}.",
            "Répondre à : {email}\n\n{s}",
        ),
        "phone": (
            "{s} Vous pouvez nous joindre au {phone}.",
            "Tél. : {phone}\n{s}",
            "{s} Notre assistance ({phone}) répond 24 h/24.",
            "En cas de problème, appelez le {phone}. {s}",
            "{s} Portable : {phone}",
            "{s} Standard : {phone}.",
            "{s} Pour toute réclamation : {phone} (du lundi au vendredi).",
            "Téléphone {phone} | {s}",
            "{s} Le numéro d'astreinte est le {phone}.",
        ),
        "ip": (
            "{s} Le miroir {ip} a été injoignable pendant deux heures.",
            "Les requêtes venant de {ip} ont été bloquées par le pare-feu. {s}",
            "{s} (adresse du client {ip})",
            "Failed password for root from {ip} port 22 ssh2\n{s}",
            "{s} L'enregistrement A de la machine doit pointer vers {ip}.",
            "{s} Les journaux montrent des balayages répétés depuis {ip}.",
        ),
        "card": (
            "{s} Numéro de carte : {card}, expire fin 09/27.",
            "J'ai payé avec ma carte {card} et j'ai été débité deux fois. {s}",
            "{s} Veuillez prélever les frais sur la carte {card}.",
            "Carte bancaire : {card}\n{s}",
            "{s} Le don a été réglé avec la carte Visa {card}.",
            "{s} Moyen de paiement : {card}",
        ),
        "iban": (
            "{s} Merci de virer le montant sur l'IBAN {iban}.",
            "Coordonnées bancaires : {iban} (BIC BNPAFRPPXXX)\n{s}",
            "{s} Les dons sont à verser sur le compte {iban}.",
            "IBAN : {iban}\n{s}",
            "{s} Les remboursements sont versés sur {iban} sous dix jours.",
            "{s} Compte du bénéficiaire : {iban}",
        ),
        "national_id": (
            "{s} Numéro de sécurité sociale : {nir}",
            "Mon numéro INSEE est le {nir}. {s}",
            "{s} N° SS : {nir}",
            "Dossier du salarié, NIR {nir}\n{s}",
            "{s} Son numéro de sécu est le {nir}.",
            "{s} (numéro d'inscription au répertoire {nir})",
        ),
        "secret": (
            "{s} La clé de déploiement est {secret}.",
            "J'ai poussé par erreur mon jeton {secret} dans un dépôt public. {s}",
            "{s}\n\n    export API_TOKEN={secret}",
            "{s} Identifiants :\n    access_key: {secret}",
            "{s} (clé révoquée : {secret})",
            "{s} Authorization: Bearer {secret}",
        ),
        "person": (
            "{s} Cette section a été relue par {person}.",
            "Comme l'a fait remarquer {person} sur la liste de diffusion, {s_lower}",
            "{s} Pour toute question, adressez-vous à {person}, responsable de la publication.",
            "{s}\n\nCordialement,\n{person}",
            "Compte rendu rédigé par {person}. {s}",
            "{person} et {person2} ont proposé ceci. {s}",
            "La semaine dernière, j'ai rencontré {person} à la conférence. {s}",
            "{s} (Traduction : {person})",
            "{s} J'ai demandé à {person} si c'était toujours valable.",
            "{s}\n\nBien à vous,\n{person}\n{address}\nTél. {phone}",
            "De : {person} <{email}>\n\n{s}",
            "{s} Un grand merci à {person}, qui a testé le correctif sur trois machines.",
            "L'interlocutrice est {person}. {s}",
        ),
        "address": (
            "{s} Notre adresse postale est : {address}.",
            "Siège social : {address}. {s}",
            "{s}\n\n{person}\n{address_lines}",
            "La rencontre a lieu au {address}. {s}",
            "{s} Les retours sont à envoyer au {address}.",
            "Adresse de facturation : {address}\n{s}",
            "{s} Le nouveau bureau se trouve au {address}, au deuxième étage.",
        ),
    },
    "zh": {
        "email": (
            "{s}如有疑问，请写信至{email}。",
            "联系邮箱：{email}",
            "{s}（邮箱：{email}）",
            "请把补丁发送到 {email}，不要直接开工单。{s}",
            "{s}退订请发邮件到{email}。",
            "回复地址：{email}\n\n{s}",
        ),
        "phone": (
            "{s}如有问题请拨打{phone}。",
            "电话：{phone}\n{s}",
            "{s}客服热线{phone}全天开通。",
            "出现故障时，请致电{phone}。{s}",
            "{s}手机：{phone}",
            "{s}联系方式：{phone}（工作日）",
            "{s}值班人员的号码是{phone}。",
            "Tel: {phone} | {s}",
            "{s}有任何疑问可以打 {phone} 咨询。",
        ),
        "ip": (
            "{s}镜像服务器 {ip} 有两个小时无法访问。",
            "来自{ip}的请求已被防火墙拦截。{s}",
            "{s}（客户端地址 {ip}）",
            "Failed password for root from {ip} port 22 ssh2\n{s}",
            "{s}请把该主机的 A 记录指向{ip}。",
            "{s}日志显示有来自 {ip} 的反复扫描。",
        ),
        "card": (
            "{s}卡号：{card}，有效期至 09/27。",
            "我用银行卡{card}付款，却被扣了两次钱。{s}",
            "{s}请从信用卡 {card} 扣除注册费。",
            "信用卡：{card}\n{s}",
            "{s}这笔捐款是用 Visa 卡 {card} 支付的。",
            "{s}支付方式：{card}",
        ),
        "iban": (
            "{s}请将款项汇至 IBAN {iban}。",
            "收款账户：{iban}（BIC DEUTDEFF）\n{s}",
            "{s}捐款请汇入账户{iban}。",
            "IBAN：{iban}\n{s}",
            "{s}退款将在十天内退回{iban}。",
            "{s}收款人账号：{iban}",
        ),
        "national_id": (
            "{s}身份证号：{cnid}",
            "本人身份证号码为{cnid}。{s}",
            "{s}（公民身份号码 {cnid}）",
            "员工档案，身份证 {cnid}\n{s}",
            "{s}她的身份证号是{cnid}。",
            "{s}证件号码：{cnid}",
        ),
        "secret": (
            "{s}部署密钥是{secret}。",
            "我不小心把令牌 {secret} 推送到了公开仓库。{s}",
            "{s}\n\n    export API_TOKEN={secret}",
            "{s}访问凭据如下：\n    access_key: {secret}",
            "{s}（已吊销的密钥：{secret}）",
            "{s} Authorization: Bearer {secret}",
        ),
        "person": (
            "{s}本节由{person}审校。",
            "正如{person}在邮件列表中指出的，{s}",
            "{s}如有疑问，请咨询发布协调人{person}。",
            "{s}\n——{person}",
            "会议记录：{person}。{s}",
            "{person}和{person2}都提出了以下建议。{s}",
            "上周我在大会上见到了{person}先生，{s}",
            "{s}（译者：{person}）",
            "{person}女士认为，{s}",
            "{s}\n\n此致\n{person}\n{address}\n电话：{phone}",
            "发件人：{person} <{email}>\n\n{s}",
            "{s}感谢{person}在三台机器上测试了这个补丁。",
            "{person}教授补充说：{s}",
        ),
        "address": (
            "{s}我们的通信地址是{address}。",
            "公司注册地址：{address}。{s}",
            "{s}\n\n{person}\n{address_lines}",
            "本次聚会在{address}举行，{s}",
            "{s}退货请寄至：{address}",
            "账单地址：{address}\n{s}",
            "{s}新办公室位于{address}二楼。",
        ),
    },
    "ja": {
        "email": (
            "{s}ご質問は{email}までお寄せください。",
            "連絡先メール：{email}",
            "{s}（メール：{email}）",
            "パッチはチケットではなく {email} に送ってください。{s}",
            "{s}配信停止は{email}宛てにメールしてください。",
            "返信先：{email}\n\n{s}",
        ),
        "phone": (
            "{s}お問い合わせは{phone}までお電話ください。",
            "TEL：{phone}\n{s}",
            "{s}サポート窓口（{phone}）は24時間対応です。",
            "不具合の際は{phone}へご連絡ください。{s}",
            "{s}携帯：{phone}",
            "{s}代表番号 {phone}",
            "{s}平日は{phone}で受け付けています。",
            "Tel: {phone} | {s}",
            "{s}当番の担当者の番号は{phone}です。",
        ),
        "ip": (
            "{s}ミラーサーバ {ip} に2時間接続できませんでした。",
            "{ip}からのリクエストはファイアウォールで遮断されました。{s}",
            "{s}（クライアントアドレス {ip}）",
            "Failed password for root from {ip} port 22 ssh2\n{s}",
            "{s}ホストの A レコードを{ip}に向けてください。",
            "{s}ログには {ip} からの繰り返しのスキャンが記録されています。",
        ),
        "card": (
            "{s}カード番号：{card}、有効期限 09/27。",
            "カード{card}で支払ったところ、二重に請求されました。{s}",
            "{s}登録料はクレジットカード {card} から引き落としてください。",
            "クレジットカード：{card}\n{s}",
            "{s}寄付は Visa カード {card} で行われました。",
            "{s}お支払い方法：{card}",
        ),
        "iban": (
            "{s}代金は IBAN {iban} にお振り込みください。",
            "振込先：{iban}（BIC DEUTDEFF）\n{s}",
            "{s}寄付は口座{iban}へお願いします。",
            "IBAN：{iban}\n{s}",
            "{s}返金は10日以内に{iban}へ振り込まれます。",
            "{s}受取人口座：{iban}",
        ),
        "national_id": (
            "{s}マイナンバー：{mynumber}",
            "私の個人番号は{mynumber}です。{s}",
            "{s}（個人番号 {mynumber}）",
            "社員台帳、マイナンバー {mynumber}\n{s}",
            "{s}彼女のマイナンバーは{mynumber}です。",
            "{s}個人番号：{mynumber}",
        ),
        "secret": (
            "{s}デプロイ用の鍵は{secret}です。",
            "うっかりトークン {secret} を公開リポジトリにプッシュしてしまいました。{s}",
            "{s}\n\n    export API_TOKEN={secret}",
            "{s}認証情報は次のとおりです：\n    access_key: {secret}",
            "{s}（失効済みの鍵：{secret}）",
            "{s} Authorization: Bearer {secret}",
        ),
        "person": (
            "{s}この節は{person}さんが校閲しました。",
            "メーリングリストで{person}氏が指摘したように、{s}",
            "{s}ご質問はリリース担当の{person}までお寄せください。",
            "{s}\n――{person}",
            "議事録作成：{person}。{s}",
            "{person}さんと{person2}さんから次の提案がありました。{s}",
            "先週の勉強会で{person}先生にお会いしました。{s}",
            "{s}（翻訳：{person}）",
            "担当者の{person}によれば、{s}",
            "{s}\n\n{address}\n{person}\n電話：{phone}",
            "差出人：{person} <{email}>\n\n{s}",
            "{s}パッチを3台のマシンで試してくれた{person}さんに感謝します。",
            "{person}様より次のご意見をいただきました。{s}",
        ),
        "address": (
            "{s}郵送先は{address}です。",
            "本社所在地：{address}。{s}",
            "{s}\n\n{address_lines}\n{person}",
            "勉強会は{address}で開催します。{s}",
            "{s}返品は{address}までお送りください。",
            "請求先住所：{address}\n{s}",
            "{s}新しい事務所は{address}の2階にあります。",
        ),
    },
}

# Decoy frames, per language: what must pass untouched.
DECOY_FRAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "isbn": ("{s} (see the second edition, ISBN {isbn})", "Further reading: Unix Network Programming, {isbn}. {s}"),
        "date": ("{s} Last changed on {date}.", "Released {date}: {s}"),
        "time": ("{s} The cron job runs daily at {time}.", "{s} The outage began at {time} and lasted an hour."),
        "version": ("{s} This was fixed in version {version}.", "Upgrade to {version} or later. {s}"),
        "uuid": ("{s} (request id {uuid})", "UUID={uuid} / ext4 defaults 0 1\n{s}"),
        "git_hash": ("{s} The fix is commit {git_hash}.", "{s} (upstream revision {git_hash})"),
        "hex_colour": ("{s} The theme uses {hex_colour} as its accent colour.", "{s} Links are shown in {hex_colour}."),
        "luhn_invalid": ("{s} Reference {luhn_invalid} was not accepted.", "{s} Serial number: {luhn_invalid}"),
        "order_number": ("{s} Order #{order_number} has shipped.", "Your order number is {order_number}. {s}"),
        "line_number": ("{s} The error is raised at line {line_number}.", "{s} See line {line_number} of setup.py."),
    },
    "de": {
        "isbn": ("{s} (siehe die zweite Auflage, ISBN {isbn})", "Weiterführend: Linux-Kompendium, {isbn}. {s}"),
        "date": ("{s} Zuletzt geändert am {date}.", "Veröffentlicht am {date}: {s}"),
        "time": ("{s} Der Cronjob läuft täglich um {time} Uhr.", "{s} Der Ausfall begann um {time}."),
        "version": ("{s} Das wurde in Version {version} behoben.", "Aktualisieren Sie auf {version} oder neuer. {s}"),
        "uuid": ("{s} (Anfrage-ID {uuid})", "UUID={uuid} / ext4 defaults 0 1\n{s}"),
        "git_hash": ("{s} Die Korrektur ist Commit {git_hash}.", "{s} (Upstream-Revision {git_hash})"),
        "hex_colour": ("{s} Das Design nutzt {hex_colour} als Akzentfarbe.", "{s} Links erscheinen in {hex_colour}."),
        "luhn_invalid": ("{s} Die Referenz {luhn_invalid} wurde abgelehnt.", "{s} Seriennummer: {luhn_invalid}"),
        "order_number": (
            "{s} Bestellung Nr. {order_number} wurde versandt.",
            "Ihre Bestellnummer: {order_number}. {s}",
        ),
        "line_number": ("{s} Der Fehler tritt in Zeile {line_number} auf.", "{s} Siehe Zeile {line_number} der Datei."),
    },
    "fr": {
        "isbn": (
            "{s} (voir la deuxième édition, ISBN {isbn})",
            "Pour aller plus loin : Administration Linux, {isbn}. {s}",
        ),
        "date": ("{s} Dernière modification le {date}.", "Publié le {date} : {s}"),
        "time": ("{s} La tâche cron s'exécute chaque jour à {time}.", "{s} La panne a commencé à {time}."),
        "version": ("{s} Ce défaut est corrigé dans la version {version}.", "Passez à la {version} ou plus. {s}"),
        "uuid": ("{s} (identifiant de requête {uuid})", "UUID={uuid} / ext4 defaults 0 1\n{s}"),
        "git_hash": ("{s} La correction est le commit {git_hash}.", "{s} (révision amont {git_hash})"),
        "hex_colour": (
            "{s} Le thème utilise {hex_colour} comme couleur d'accent.",
            "{s} Les liens sont en {hex_colour}.",
        ),
        "luhn_invalid": ("{s} La référence {luhn_invalid} a été refusée.", "{s} Numéro de série : {luhn_invalid}"),
        "order_number": (
            "{s} La commande n° {order_number} a été expédiée.",
            "Votre numéro de commande : {order_number}. {s}",
        ),
        "line_number": (
            "{s} L'erreur survient à la ligne {line_number}.",
            "{s} Voir la ligne {line_number} du fichier.",
        ),
    },
    "zh": {
        "isbn": ("{s}（参见第二版，ISBN {isbn}）", "延伸阅读：《Linux 系统管理》，{isbn}。{s}"),
        "date": ("{s}最后修改于{date}。", "{date}发布：{s}"),
        "time": ("{s}该定时任务每天{time}运行。", "{s}故障从{time}开始。"),
        "version": ("{s}该问题已在 {version} 版中修复。", "请升级到{version}或更高版本。{s}"),
        "uuid": ("{s}（请求 ID {uuid}）", "UUID={uuid} / ext4 defaults 0 1\n{s}"),
        "git_hash": ("{s}修复提交为 {git_hash}。", "{s}（上游修订 {git_hash}）"),
        "hex_colour": ("{s}主题使用 {hex_colour} 作为强调色。", "{s}链接显示为{hex_colour}。"),
        "luhn_invalid": ("{s}参考号 {luhn_invalid} 未被接受。", "{s}序列号：{luhn_invalid}"),
        "order_number": ("{s}订单号 {order_number} 已发货。", "您的订单编号：{order_number}。{s}"),
        "line_number": ("{s}错误出现在第 {line_number} 行。", "{s}参见该文件第{line_number}行。"),
    },
    "ja": {
        "isbn": ("{s}（第2版、ISBN {isbn} を参照）", "参考文献：『Linux 管理入門』{isbn}。{s}"),
        "date": ("{s}最終更新日：{date}。", "{date}公開：{s}"),
        "time": ("{s}この cron ジョブは毎日{time}に実行されます。", "{s}障害は{time}に始まりました。"),
        "version": (
            "{s}この問題はバージョン {version} で修正されました。",
            "{version} 以降にアップグレードしてください。{s}",
        ),
        "uuid": ("{s}（リクエスト ID {uuid}）", "UUID={uuid} / ext4 defaults 0 1\n{s}"),
        "git_hash": ("{s}修正はコミット {git_hash} です。", "{s}（上流のリビジョン {git_hash}）"),
        "hex_colour": ("{s}テーマのアクセントカラーは {hex_colour} です。", "{s}リンクは{hex_colour}で表示されます。"),
        "luhn_invalid": ("{s}参照番号 {luhn_invalid} は受け付けられませんでした。", "{s}シリアル番号：{luhn_invalid}"),
        "order_number": ("{s}ご注文番号 {order_number} を発送しました。", "注文番号：{order_number}。{s}"),
        "line_number": (
            "{s}エラーは{line_number}行目で発生します。",
            "{s}ファイルの{line_number}行目を参照してください。",
        ),
    },
}

# Lines put into real code: per programming language and kind ({indent} is the indentation of the next line).
CODE_FRAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "python": {
        "secret": (
            'AWS_ACCESS_KEY_ID = "{aws_key}"',
            'aws_secret_access_key = "{aws_secret}"',
            'GITHUB_TOKEN = "{github}"',
            'headers = {{"Authorization": "Bearer {jwt}"}}',
            'client = Client(api_key="{google}")',
            'stripe.api_key = "{stripe}"',
            'SLACK_WEBHOOK = "{slack_webhook}"',
            'DB_PASSWORD = "{password}"',
            'PRIVATE_KEY = """{private_key}"""',
            'slack_token = "{slack}"',
        ),
        "email": ("# Maintainer contact: {email}", 'BUG_REPORTS = "{email}"', "# Questions: <{email}>"),
        "ip": ('SERVER = "{ip}"', 'ALLOWED_HOSTS = ["{ip}"]', "# production database at {ip}"),
        "version": ('__version__ = "{version}"',),
        "uuid": ('REQUEST_ID = "{uuid}"',),
        "git_hash": ("# fixed upstream in {git_hash}",),
        "hex_colour": ('ACCENT = "{hex_colour}"',),
        "line_number": ("# see line {line_number} of the original module",),
        "date": ("# last reviewed {date}",),
    },
    "c": {
        "secret": (
            '#define AWS_ACCESS_KEY_ID "{aws_key}"',
            'static const char *aws_secret_access_key = "{aws_secret}";',
            '#define GITHUB_TOKEN "{github}"',
            'static const char auth_header[] = "Authorization: Bearer {jwt}";',
            'static const char *api_key = "{google}";',
            '#define STRIPE_KEY "{stripe}"',
            'static const char *password = "{password}";',
            '#define SLACK_TOKEN "{slack}"',
        ),
        "email": ("/* Report bugs to {email} */", '#define MAINTAINER "{email}"'),
        "ip": ('static const char *server = "{ip}";', "/* fallback resolver: {ip} */"),
        "version": ('#define VERSION_STRING "{version}"',),
        "uuid": ("/* {uuid} */",),
        "git_hash": ("/* upstream commit {git_hash} */",),
        "hex_colour": ('#define ACCENT "{hex_colour}"',),
        "line_number": ("/* see line {line_number} above */",),
        "date": ("/* last reviewed {date} */",),
    },
    "javascript": {
        "secret": (
            "const apiKey = '{google}';",
            "const token = '{jwt}';",
            "const githubToken = '{github}';",
            "const stripeKey = '{stripe}';",
            "var awsAccessKeyId = '{aws_key}';",
            "const password = '{password}';",
        ),
        "email": ("// contact: {email}", "var supportEmail = '{email}';"),
        "ip": ("fetch('http://{ip}/api/v1/status');", "var host = '{ip}';"),
        "version": ("var VERSION = '{version}';",),
        "uuid": ("var sessionId = '{uuid}';",),
        "git_hash": ("// built from {git_hash}",),
        "hex_colour": ("color: '{hex_colour}',",),
        "line_number": ("// see line {line_number}",),
        "date": ("// last reviewed {date}",),
    },
    "shell": {
        "secret": (
            "export AWS_ACCESS_KEY_ID={aws_key}",
            "export AWS_SECRET_ACCESS_KEY={aws_secret}",
            "export GITHUB_TOKEN={github}",
            "curl -H 'Authorization: Bearer {jwt}' https://api.example.org/v1/jobs",
            "export SLACK_TOKEN={slack}",
            "DB_PASSWORD='{password}'",
        ),
        "email": ("# Maintainer: {email}", 'MAILTO="{email}"'),
        "ip": ("ssh deploy@{ip} 'systemctl restart app'", "SERVER={ip}"),
        "version": ("VERSION={version}",),
        "uuid": ("BOOT_UUID={uuid}",),
        "git_hash": ("git checkout {git_hash}",),
        "hex_colour": ("PROMPT_COLOUR='{hex_colour}'",),
        "line_number": ("# see line {line_number}",),
        "date": ("# last reviewed {date}",),
    },
}
SLOT_TYPE = {
    "ssn": "national_id", "nino": "national_id", "taxid": "national_id", "nir": "national_id", "cnid": "national_id",
    "mynumber": "national_id", "address_lines": "address",
    **{kind: "secret" for kind in (
        "aws_key", "aws_secret", "github", "jwt", "google", "stripe", "slack", "slack_webhook", "password",
        "private_key",
    )},
}  # fmt: skip


@dataclass(frozen=True)
class Passage:
    text: str
    source: str
    split: str


def rng_for(*parts: object) -> random.Random:
    return random.Random(hashlib.sha256("/".join(map(str, (SEED, *parts))).encode()).digest())


def split_of(text: str) -> str:
    return "dev" if zlib.crc32(f"{SEED}/{text}".encode()) % DEV_EVERY == 0 else "test"


# ---------------------------------------------------------------------------------------------------------- carriers


def demo_documents(names: set[str]) -> Iterator[tuple[str, str]]:
    """(source name, text) of the demo corpus's documents of the named sources, as the pipeline ingests them."""
    for source in load_config().sources:
        if source.name not in names:
            continue
        kept = ingest_files([f.url for f in list_source_files(source)], source, IngestConfig())[0].kept
        for text in kept.column("text").to_pylist():
            yield source.name, text


def carrier_passages(first_names: set[str]) -> dict[str, dict[str, list[Passage]]]:
    """Passages of one or two consecutive usable sentences, per language and split."""
    trained = {s for found in load_sentences(TaggerBuild().sources, 10**9).values() for s in found}
    passages: dict[str, dict[str, list[Passage]]] = {lang: {"dev": [], "test": []} for lang in LANGS}
    seen: set[str] = set()
    for source, text in demo_documents(set(CARRIER_SOURCES)):
        previous: tuple[str, str] | None = None
        for sentence in sentences_of(text):
            lang = sentence_language(sentence)
            usable = (
                lang in CARRIER_SOURCES[source]
                and sentence not in trained
                and sentence not in seen
                and _usable(sentence, lang, first_names)
            )
            if not usable or lang is None:
                previous = None
                continue
            seen.add(sentence)
            split = split_of(sentence)
            passages[lang][split].append(Passage(sentence, source, split))
            if previous is not None and previous[0] == lang and split_of(previous[1]) == split:
                glue = "" if lang in CJK else " "
                passages[lang][split].append(Passage(previous[1] + glue + sentence, source, split))
            previous = (lang, sentence)
    return passages


def _usable(sentence: str, lang: str | None, first_names: set[str]) -> bool:
    """Long enough, and nothing personal of its own: no email, IP address, real person or transliterated name."""
    if len(sentence) < (12 if lang in CJK else 30) or "@" in sentence or _IP_LIKE.search(sentence):
        return False
    if REAL_PEOPLE.search(sentence) or _DOTTED_NAME.search(sentence):
        return False
    words = _CAPITALISED.findall(sentence)
    return not any(a in first_names and b[:1].isupper() for a, b in itertools.pairwise(words))


def code_windows() -> dict[str, list[Passage]]:
    """Windows of 6 to 18 lines of the demo corpus's code files, per programming language."""
    windows: dict[str, list[Passage]] = {lang: [] for lang in CODE_FRAMES}
    root = REPO_ROOT / "pretrain_core" / "data" / "demo" / "code"
    for path in sorted(root.rglob("*")):
        language = CODE_EXTENSIONS.get(path.suffix)
        if language is None or not path.is_file():
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        rng = rng_for("code", path.relative_to(root))
        for start in range(0, max(1, len(lines) - 18), 40):
            window = "\n".join(lines[start : start + rng.randint(6, 18)])
            if len(window.strip()) < 80 or "@" in window or _IP_LIKE.search(window) or REAL_PEOPLE.search(window):
                continue
            windows[language].append(Passage(window, f"code/{path.relative_to(root)}", split_of(window)))
    return windows


# ------------------------------------------------------------------------------------------------------------ values


def luhn_check_digit(body: str) -> str:
    total = 0
    for index, char in enumerate(reversed(body)):
        value = int(char)
        if index % 2 == 0:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return str(-total % 10)


def luhn_ok(number: str) -> bool:
    return luhn_check_digit(number[:-1]) == number[-1]


def digits(rng: random.Random, count: int, first: str = "0123456789") -> str:
    return rng.choice(first) + "".join(rng.choice(string.digits) for _ in range(count - 1))


class Values:
    """Generators of realistic values, each returning (text, subtype); all randomness from one seeded generator."""

    def __init__(self, lang: str, rng: random.Random, names: NameBook) -> None:
        self.lang, self.rng, self.names = lang, rng, names
        self.faker = {loc: _seeded_faker(loc, lang) for loc in EMAIL_LOCALES[lang]}

    def make(self, slot: str) -> tuple[str, str]:
        return getattr(self, slot)()

    # structured
    def email(self) -> tuple[str, str]:
        fake = self.faker[self.rng.choice(sorted(self.faker))]
        return self.rng.choice((fake.free_email, fake.company_email, fake.email))(), "email"

    def phone(self) -> tuple[str, str]:
        country = self.rng.choice(PHONE_COUNTRIES[self.lang])
        international = self.rng.random() < 0.45
        text = PHONE_MAKERS[country](self.rng, international)
        return text, f"{country}_{'international' if international else 'national'}"

    def ip(self) -> tuple[str, str]:
        if self.rng.random() < 0.6:
            while True:
                address = ipaddress.IPv4Address(self.rng.getrandbits(32))
                if address.is_global and not str(address).startswith(("0.", "255.")):
                    return str(address), "ipv4"
        while True:
            prefix = self.rng.choice((0x2A00, 0x2A01, 0x2A02, 0x2400, 0x2404, 0x2600, 0x2605, 0x2804, 0x2C0F, 0x2001))
            rest = [self.rng.getrandbits(16) for _ in range(7)]
            if self.rng.random() < 0.5:  # an interface id with zeros, written compressed
                rest[3:6] = [0, 0, 0]
            address6 = ipaddress.IPv6Address((prefix << 112) + sum(v << (16 * (6 - i)) for i, v in enumerate(rest)))
            if address6.is_global:
                return (address6.compressed if self.rng.random() < 0.8 else address6.exploded), "ipv6"

    def card(self) -> tuple[str, str]:
        network, prefixes, length = self.rng.choice(CARD_NETWORKS)
        body = self.rng.choice(prefixes)
        body += digits(self.rng, length - len(body) - 1)
        number = body + luhn_check_digit(body)
        style = self.rng.random()
        if style < 0.35:
            return number, network
        separator = " " if style < 0.8 else "-"
        groups = {15: (4, 6, 5), 14: (4, 6, 4)}.get(length) or tuple(
            [4] * (length // 4) + ([length % 4] if length % 4 else [])
        )
        return separator.join(_chunks(number, groups)), network

    def iban(self) -> tuple[str, str]:
        country = self.rng.choice(IBAN_COUNTRIES[self.lang])
        bban = "".join(
            self.rng.choice(string.ascii_uppercase if kind == "a" else string.digits) for kind in IBAN_BBAN[country]
        )
        check = 98 - int("".join(str(int(c, 36)) for c in bban + country + "00")) % 97
        compact = f"{country}{check:02d}{bban}"
        grouped = " ".join(compact[i : i + 4] for i in range(0, len(compact), 4))
        return (grouped if self.rng.random() < 0.6 else compact), country.lower()

    def ssn(self) -> tuple[str, str]:
        area = self.rng.choice([a for a in range(1, 900) if a != 666])
        text = f"{area:03d}-{self.rng.randint(1, 99):02d}-{self.rng.randint(1, 9999):04d}"
        return (text if self.rng.random() < 0.8 else text.replace("-", " ")), "us_ssn"

    def nino(self) -> tuple[str, str]:
        while True:
            prefix = self.rng.choice("ABCEGHJKLMNOPRSTWXYZ") + self.rng.choice("ABCEGHJKLMNPRSTWXYZ")
            if prefix not in {"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"}:
                break
        number, suffix = digits(self.rng, 6), self.rng.choice("ABCD")
        spaced = f"{prefix} {number[:2]} {number[2:4]} {number[4:]} {suffix}"
        return (spaced if self.rng.random() < 0.5 else f"{prefix}{number}{suffix}"), "uk_nino"

    def taxid(self) -> tuple[str, str]:
        while True:
            repeated = self.rng.choice(string.digits)
            others = self.rng.sample([d for d in string.digits if d != repeated], 10 - self.rng.choice((2, 3)))
            body = [repeated] * (10 - len(others)) + others
            self.rng.shuffle(body)
            if body[0] != "0":
                break
        product = 10
        for char in body:
            total = (int(char) + product) % 10 or 10
            product = (total * 2) % 11
        number = "".join(body) + str((11 - product) % 10)
        spaced = f"{number[:2]} {number[2:5]} {number[5:8]} {number[8:]}"
        return (spaced if self.rng.random() < 0.5 else number), "de_steuer_id"

    def nir(self) -> tuple[str, str]:
        department = self.rng.choice([f"{d:02d}" for d in range(1, 96) if d != 20] + ["2A", "2B"])
        body = (
            f"{self.rng.choice('12')}{self.rng.randint(40, 99):02d}{self.rng.randint(1, 12):02d}{department}"
            f"{self.rng.randint(1, 990):03d}{self.rng.randint(1, 999):03d}"
        )
        key = 97 - int(body.replace("2A", "19").replace("2B", "18")) % 97
        number = f"{body}{key:02d}"
        spaced = " ".join(_chunks(number, (1, 2, 2, 2, 3, 3, 2)))
        return (spaced if self.rng.random() < 0.6 else number), "fr_nir"

    def cnid(self) -> tuple[str, str]:
        region = self.rng.choice(CN_REGIONS)
        birth = self.rng.randint(-7300, 12000)  # days from 1970-01-01: born 1950 to 2002
        date = (datetime.date(1970, 1, 1) + datetime.timedelta(days=birth)).strftime("%Y%m%d")
        body = f"{region}{date}{self.rng.randint(1, 999):03d}"
        total = sum(
            int(d) * w for d, w in zip(body, (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2), strict=True)
        )
        return body + "10X98765432"[total % 11], "cn_resident_id"

    def mynumber(self) -> tuple[str, str]:
        body = digits(self.rng, 11)
        weights = [n + 1 if n <= 6 else n - 5 for n in range(1, 12)]
        remainder = sum(int(d) * w for d, w in zip(reversed(body), weights, strict=True)) % 11
        number = body + str(0 if remainder <= 1 else 11 - remainder)
        style = self.rng.random()
        if style < 0.4:
            return number, "jp_my_number"
        return ("-" if style > 0.8 else " ").join(_chunks(number, (4, 4, 4))), "jp_my_number"

    # keys and tokens
    def secret(self) -> tuple[str, str]:
        return self.make(self.rng.choice(("aws_key", "github", "jwt", "slack", "google", "stripe")))

    def aws_key(self) -> tuple[str, str]:
        return "AKIA" + "".join(self.rng.choice(string.ascii_uppercase + "234567") for _ in range(16)), "aws_access_key"

    def aws_secret(self) -> tuple[str, str]:
        return _random_chars(self.rng, 40, string.ascii_letters + string.digits + "/+"), "aws_secret_key"

    def github(self) -> tuple[str, str]:
        if self.rng.random() < 0.75:
            return self.rng.choice(("ghp_", "gho_", "ghs_")) + _random_chars(self.rng, 36), "github_token"
        return f"github_pat_{_random_chars(self.rng, 22)}_{_random_chars(self.rng, 59)}", "github_token"

    def jwt(self) -> tuple[str, str]:
        header = {"alg": self.rng.choice(("HS256", "RS256")), "typ": "JWT"}
        payload = {"sub": str(self.rng.randint(10**6, 10**9)), "iat": self.rng.randint(1_500_000_000, 1_800_000_000)}
        parts = [json.dumps(header, separators=(",", ":")), json.dumps(payload, separators=(",", ":"))]
        encoded = [base64.urlsafe_b64encode(p.encode()).decode().rstrip("=") for p in parts]
        signature = _random_chars(self.rng, 43, string.ascii_letters + string.digits + "-_")
        return ".".join([*encoded, signature]), "jwt"

    def slack(self) -> tuple[str, str]:
        return (
            f"xox{self.rng.choice('bp')}-{digits(self.rng, 12, '123456789')}-{digits(self.rng, 13, '123456789')}-"
            f"{_random_chars(self.rng, 24)}"
        ), "slack_token"

    def slack_webhook(self) -> tuple[str, str]:
        upper = string.ascii_uppercase + string.digits
        return (
            "https://hooks.slack.com/services/"
            f"T{_random_chars(self.rng, 8, upper)}/B{_random_chars(self.rng, 10, upper)}"
            f"/{_random_chars(self.rng, 24)}"
        ), "slack_webhook"

    def google(self) -> tuple[str, str]:
        return "AIza" + _random_chars(self.rng, 35, string.ascii_letters + string.digits + "-_"), "google_api_key"

    def stripe(self) -> tuple[str, str]:
        return "sk_live_" + _random_chars(self.rng, self.rng.choice((24, 32, 99))), "stripe_key"

    def password(self) -> tuple[str, str]:
        alphabet = string.ascii_letters + string.digits + "!#%&*-_"
        while True:
            value = _random_chars(self.rng, self.rng.randint(14, 24), alphabet)
            if any(c.isdigit() for c in value) and any(c.isupper() for c in value) and any(c.islower() for c in value):
                return value, "password"

    def private_key(self) -> tuple[str, str]:
        kind = self.rng.choice(("RSA ", "EC ", "OPENSSH ", ""))
        body = "\n".join(_random_chars(self.rng, 64, string.ascii_letters + string.digits + "+/") for _ in range(4))
        return f"-----BEGIN {kind}PRIVATE KEY-----\n{body}\n-----END {kind}PRIVATE KEY-----", "private_key"

    # people and places
    def address(self) -> tuple[str, str]:
        text, origin = self.names.address(self.rng)
        return text.replace("\n", "" if self.lang in CJK else ", "), origin

    def address_lines(self) -> tuple[str, str]:
        return self.names.address(self.rng)

    # decoys
    def isbn(self) -> tuple[str, str]:
        if self.rng.random() < 0.7:
            group = self.rng.choice(("0", "1", "3", "2", "4", "7"))
            publisher = digits(self.rng, self.rng.randint(2, 5))
            title = digits(self.rng, 9 - len(group) - len(publisher))
            body = "978" + group + publisher + title
            check = str(-sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(body)) % 10)
            return "-".join(("978", group, publisher, title, check)), "isbn13"
        group = self.rng.choice(("0", "1", "3", "2"))
        publisher = digits(self.rng, self.rng.randint(2, 5))
        title = digits(self.rng, 9 - len(group) - len(publisher))
        body = group + publisher + title
        remainder = -sum(int(d) * (10 - i) for i, d in enumerate(body)) % 11
        return "-".join((group, publisher, title, "X" if remainder == 10 else str(remainder))), "isbn10"

    def date(self) -> tuple[str, str]:
        y, m, d = self.rng.randint(1995, 2030), self.rng.randint(1, 12), self.rng.randint(1, 28)
        formats = {
            "en": (f"{y}-{m:02d}-{d:02d}", f"{m:02d}/{d:02d}/{y}", f"{MONTHS_EN[m - 1]} {d}, {y}"),
            "de": (f"{d:02d}.{m:02d}.{y}", f"{y}-{m:02d}-{d:02d}", f"{d}. {MONTHS_DE[m - 1]} {y}"),
            "fr": (f"{d:02d}/{m:02d}/{y}", f"{y}-{m:02d}-{d:02d}", f"{d} {MONTHS_FR[m - 1]} {y}"),
            "zh": (f"{y}年{m}月{d}日", f"{y}-{m:02d}-{d:02d}", f"{y}/{m:02d}/{d:02d}"),
            "ja": (
                f"{y}年{m}月{d}日",
                f"{y}/{m:02d}/{d:02d}",
                f"{y}-{m:02d}-{d:02d}T{self.rng.randint(0, 23):02d}:00:00Z",
            ),
            "code": (f"{y}-{m:02d}-{d:02d}", f"{y}/{m:02d}/{d:02d}"),
        }[self.lang]
        return self.rng.choice(formats), "date"

    def time(self) -> tuple[str, str]:
        h, m, s = self.rng.randint(0, 23), self.rng.randint(0, 59), self.rng.randint(0, 59)
        return self.rng.choice(
            (f"{h:02d}:{m:02d}", f"{h:02d}:{m:02d}:{s:02d}", f"{h}:{m:02d}:{s:02d}.{s * 7:03d}")
        ), "time"

    def version(self) -> tuple[str, str]:
        a, b, c, d = self.rng.randint(0, 12), self.rng.randint(0, 40), self.rng.randint(0, 30), self.rng.randint(1, 9)
        return self.rng.choice(
            (
                f"{a}.{b}.{c}",
                f"v{a}.{b}.{c}",
                f"{a}.{b}.{c}-rc{d}",
                f"{a}.{b}.{c}-{d}+deb12u{d}",
                f"{a}.{b}",
                f"{a + 2}.{b}.0-{c}-amd64",
                f"{a}.{b}.{c}.{self.rng.randint(100, 30000)}",
            )
        ), "version"

    def uuid(self) -> tuple[str, str]:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4)), "uuid"

    def git_hash(self) -> tuple[str, str]:
        length = self.rng.choice((40, 40, 7, 12))
        return "".join(self.rng.choice("0123456789abcdef") for _ in range(length)), f"git_hash_{length}"

    def hex_colour(self) -> tuple[str, str]:
        digits_ = "0123456789abcdef" if self.rng.random() < 0.7 else "0123456789ABCDEF"
        return "#" + "".join(self.rng.choice(digits_) for _ in range(self.rng.choice((6, 6, 3)))), "hex_colour"

    def luhn_invalid(self) -> tuple[str, str]:
        while True:
            number = self.rng.choice("45") + digits(self.rng, 15)
            if not luhn_ok(number):
                break
        return (" ".join(_chunks(number, (4, 4, 4, 4))) if self.rng.random() < 0.6 else number), "luhn_invalid"

    def order_number(self) -> tuple[str, str]:
        return self.rng.choice(
            (
                f"{digits(self.rng, 3, '123456789')}-{digits(self.rng, 7)}-{digits(self.rng, 7)}",
                digits(self.rng, 10, "123456789"),
                f"{self.rng.randint(2015, 2030)}-{digits(self.rng, 7)}",
                f"{self.rng.choice(COUNTRY_PREFIXES)}-{self.rng.randint(2015, 2030)}-{digits(self.rng, 6)}",
                digits(self.rng, 16, "123456789"),
            )
        ), "order_number"

    def line_number(self) -> tuple[str, str]:
        return str(self.rng.choice((self.rng.randint(1, 99), self.rng.randint(100, 9999)))), "line_number"


def _random_chars(rng: random.Random, count: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(count))


def _chunks(text: str, sizes: tuple[int, ...]) -> list[str]:
    out, position = [], 0
    for size in sizes:
        out.append(text[position : position + size])
        position += size
    return out


COUNTRY_PREFIXES = ("DE", "FR", "CN", "JP", "US")
MONTHS_EN = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
             "November", "December")  # fmt: skip
MONTHS_DE = ("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober",
             "November", "Dezember")  # fmt: skip
MONTHS_FR = ("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
             "novembre", "décembre")  # fmt: skip
EMAIL_LOCALES = {
    "en": ("en_US", "en_GB", "en_IE"), "de": ("de_DE", "de_AT", "de_CH"), "fr": ("fr_FR", "fr_CH"),
    "zh": ("zh_CN", "zh_TW"), "ja": ("ja_JP",), "code": ("en_US", "de_DE", "fr_FR"),
}  # fmt: skip
CARD_NETWORKS = (
    ("visa", ("4",), 16), ("visa", ("4",), 16), ("mastercard", ("51", "52", "53", "54", "55", "2221", "2720"), 16),
    ("amex", ("34", "37"), 15), ("discover", ("6011", "65"), 16), ("jcb", ("3528", "3530", "3566", "3589"), 16),
    ("unionpay", ("62",), 16), ("diners", ("36", "38"), 14),
)  # fmt: skip
IBAN_COUNTRIES = {
    "en": ("GB", "IE", "GB"), "de": ("DE", "DE", "AT", "CH"), "fr": ("FR", "FR", "BE", "CH"),
    "zh": ("DE", "GB", "FR", "NL"), "ja": ("DE", "GB", "FR", "NL"),
}  # fmt: skip
# BBAN layouts (a: letter, n: digit), ISO 13616 registry.
IBAN_BBAN = {
    "DE": "n" * 18, "GB": "aaaa" + "n" * 14, "IE": "aaaa" + "n" * 14, "FR": "n" * 23, "BE": "n" * 12,
    "AT": "n" * 16, "CH": "n" * 17, "NL": "aaaa" + "n" * 10,
}  # fmt: skip
CN_REGIONS = ("110101", "110105", "310104", "310115", "440305", "440106", "510107", "330106", "420102", "320102",
              "370202", "610113", "210102", "500103", "120101")  # fmt: skip
PHONE_COUNTRIES = {"en": ("us", "us", "uk"), "de": ("de",), "fr": ("fr",), "zh": ("cn",), "ja": ("jp",)}
US_AREAS = (201, 202, 206, 212, 213, 214, 215, 303, 305, 310, 312, 404, 408, 412, 415, 503, 510, 512, 602, 612, 617,
            646, 702, 713, 718, 720, 773, 805, 818, 857, 917, 919)  # fmt: skip


def _us_phone(rng: random.Random, international: bool) -> str:
    area, exchange, line = rng.choice(US_AREAS), rng.randint(200, 999), rng.randint(0, 9999)
    while exchange % 100 == 11:
        exchange = rng.randint(200, 999)
    if international:
        return rng.choice((f"+1 {area} {exchange} {line:04d}", f"+1-{area}-{exchange}-{line:04d}",
                           f"+1 ({area}) {exchange}-{line:04d}"))  # fmt: skip
    return rng.choice((f"({area}) {exchange}-{line:04d}", f"{area}-{exchange}-{line:04d}",
                       f"{area}.{exchange}.{line:04d}",
                       f"1-{area}-{exchange}-{line:04d}"))  # fmt: skip


def _uk_phone(rng: random.Random, international: bool) -> str:
    kind = rng.choice(("london", "mobile", "city"))
    if kind == "london":
        local = f"{rng.choice('378')}{digits(rng, 3)} {digits(rng, 4)}"
        return rng.choice((f"+44 20 {local}", f"+44 (0)20 {local}")) if international else f"020 {local}"
    if kind == "mobile":
        number = f"7{rng.choice('12345789')}{digits(rng, 2)} {digits(rng, 6)}"
        return f"+44 {number}" if international else f"0{number}"
    area = rng.choice(("161", "121", "113", "131", "141", "117"))
    local = f"{digits(rng, 3, '2345678')} {digits(rng, 4)}"
    return f"+44 {area} {local}" if international else f"0{area} {local}"


def _de_phone(rng: random.Random, international: bool) -> str:
    if rng.random() < 0.35:
        area = rng.choice(("151", "152", "157", "160", "170", "171", "172", "175", "176", "177", "178", "179"))
        subscriber = digits(rng, rng.choice((7, 8)), "123456789")
    else:
        area = rng.choice(("30", "40", "89", "221", "69", "711", "211", "351", "341", "511", "911", "6221", "761"))
        subscriber = digits(rng, 10 - len(area) + rng.choice((0, 1)), "123456789")
    if international:
        return rng.choice((f"+49 {area} {subscriber}", f"+49 (0){area} {subscriber}", f"0049 {area} {subscriber}",
                           f"+49-{area}-{subscriber}"))  # fmt: skip
    return rng.choice(
        (f"0{area} {subscriber}", f"0{area}/{subscriber}", f"0{area}-{subscriber}", f"(0{area}) {subscriber}")
    )


def _fr_phone(rng: random.Random, international: bool) -> str:
    first = rng.choice("1234567")
    pairs = [digits(rng, 2) for _ in range(4)]
    if international:
        return rng.choice((f"+33 {first} {' '.join(pairs)}", f"+33 (0){first} {' '.join(pairs)}",
                           f"0033 {first} {' '.join(pairs)}", f"+33{first}{''.join(pairs)}"))  # fmt: skip
    return rng.choice((f"0{first} {' '.join(pairs)}", f"0{first}.{'.'.join(pairs)}", f"0{first}-{'-'.join(pairs)}",
                       f"0{first}{''.join(pairs)}"))  # fmt: skip


def _cn_phone(rng: random.Random, international: bool) -> str:
    if rng.random() < 0.6:
        mobile = f"1{rng.choice('3456789')}{digits(rng, 9)}"
        spaced = f"{mobile[:3]} {mobile[3:7]} {mobile[7:]}"
        if international:
            return rng.choice((f"+86 {spaced}", f"+86-{mobile}", f"+86{mobile}", f"+86 {mobile}"))
        return rng.choice((mobile, spaced, f"{mobile[:3]}-{mobile[3:7]}-{mobile[7:]}"))
    area = rng.choice(("10", "21", "20", "755", "571", "28", "27", "25", "22", "23"))
    local = digits(rng, 8 if len(area) == 2 else rng.choice((7, 8)), "23456789")
    if international:
        return rng.choice((f"+86 {area} {local[:4]} {local[4:]}", f"+86-{area}-{local}"))
    return rng.choice((f"0{area}-{local}", f"(0{area}) {local}", f"0{area} {local}"))


def _jp_phone(rng: random.Random, international: bool) -> str:
    kind = rng.random()
    if kind < 0.4:
        national = f"0{rng.choice('789')}0-{digits(rng, 4, '123456789')}-{digits(rng, 4)}"
    elif kind < 0.75:
        national = f"0{rng.choice('36')}-{digits(rng, 4, '2345678')}-{digits(rng, 4)}"
    elif kind < 0.9:
        national = f"0{rng.choice(('45', '11', '52', '92', '75', '22'))}-{digits(rng, 3, '2345678')}-{digits(rng, 4)}"
    else:
        national = f"0120-{digits(rng, 3, '123456789')}-{digits(rng, 3)}"
    if not international or national.startswith("0120"):
        return national
    body = national[1:]
    return rng.choice((f"+81 {body}", f"+81-{body}", f"+81 {body.replace('-', ' ')}"))


PHONE_MAKERS: dict[str, Callable[[random.Random, bool], str]] = {
    "us": _us_phone, "uk": _uk_phone, "de": _de_phone, "fr": _fr_phone, "cn": _cn_phone, "jp": _jp_phone,
}  # fmt: skip


def _seeded_faker(locale: str, purpose: str) -> Faker:
    fake = Faker(locale)
    fake.seed_instance(zlib.crc32(f"{SEED}/{locale}/{purpose}".encode()))
    return fake


# ------------------------------------------------------------------------------------------------------------- names

# Faker locales the tagger never trains on, for addresses; and Faker's training locales for held-out names.
ADDRESS_LOCALES = {
    "en": ("en_IE", "en_AU", "en_CA", "en_NZ", "en_US", "en_GB"),
    "de": ("de_AT", "de_CH", "de_DE"),
    "fr": ("fr_CH", "fr_FR"),
    "zh": ("zh_TW", "zh_CN"),
    "ja": ("ja_JP",),
}
TRAINING_LOCALES = {"en": ("en_US", "en_GB"), "de": ("de_DE",), "fr": ("fr_FR",), "zh": ("zh_CN",), "ja": ("ja_JP",)}
MIMESIS_LOCALES = {
    "en": (Locale.EN, Locale.EN_GB, Locale.EN_AU, Locale.EN_CA),
    "de": (Locale.DE, Locale.DE_AT, Locale.DE_CH),
    "fr": (Locale.FR,),
    "zh": (Locale.ZH,),
    "ja": (Locale.JA,),
}
TITLES = {
    "en": ("Dr. ", "Mr. ", "Ms. ", "Prof. "),
    "de": ("Dr. ", "Herr ", "Frau ", "Prof. "),
    "fr": ("M. ", "Mme ", "Dr "),
}


class NameBook:
    """Given names and surnames of one language and split (mimesis's lists, and Faker's held-out split), and the
    addresses to draw from."""

    def __init__(self, lang: str, split: str) -> None:
        self.lang = lang
        given: set[str] = set()
        family: set[str] = set()
        for mimesis_locale in MIMESIS_LOCALES[lang]:
            datasets = Path(mimesis.__file__).parent / "datasets"
            data = json.loads((datasets / mimesis_locale.value / "person.json").read_text())
            given.update(n for names in data["names"].values() for n in names)
            family.update(data["surnames"] if isinstance(data["surnames"], list) else
                          [n for names in data["surnames"].values() for n in names])  # fmt: skip
        for locale in TRAINING_LOCALES[lang]:
            first_names, last_names = faker_names(locale)
            given.update(n for n in first_names if _split_of(n) == "test")
            family.update(n for n in last_names if _split_of(n) == "test" or lang == "zh")
        self.given = sorted(n for n in given if split_of(n) == split and " " not in n)
        self.family = sorted(n for n in family if split_of(n) == split and " " not in n)
        self.addresses = self._addresses(split)

    def person(self, rng: random.Random) -> tuple[str, str, str]:
        """(title or "", name, subtype): a title is context, outside the labelled span."""
        given, family = rng.choice(self.given), rng.choice(self.family)
        if self.lang == "zh":
            return "", family + (given[:1] if rng.random() < 0.2 else given), "zh_name"
        if self.lang == "ja":
            if rng.random() < 0.15:
                return "", family, "ja_surname"
            return "", family + rng.choice(("", " ", " ", "\u3000")) + given, "ja_name"
        roll = rng.random()
        if roll < 0.6:
            return "", f"{given} {family}", "full_name"
        if roll < 0.75:
            return rng.choice(TITLES[self.lang]), family, "title_surname"
        if roll < 0.85 and self.lang == "en":
            return "", f"{given} {rng.choice(string.ascii_uppercase)}. {family}", "middle_initial"
        if roll < 0.92:
            return "", f"{given} {family}-{rng.choice(self.family)}", "double_surname"
        return "", f"{given[0]}. {family}", "initial_surname"

    def address(self, rng: random.Random) -> tuple[str, str]:
        return rng.choice(self.addresses)

    def _addresses(self, split: str) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        for locale in ADDRESS_LOCALES[self.lang]:
            fake = _seeded_faker(locale, f"address/{split}")
            for _ in range(60):
                text = fake.address()
                if self.lang == "ja" and fake.random.random() < 0.4:
                    text = f"〒{fake.zipcode()} {text}"
                found.append((text, f"faker_{locale}"))
        for mimesis_locale in MIMESIS_LOCALES[self.lang]:
            seed = zlib.crc32(f"{SEED}/{mimesis_locale.value}/{split}".encode())
            generator = mimesis.Address(mimesis_locale, seed=seed)
            for _ in range(40):
                found.append((_mimesis_address(self.lang, generator), f"mimesis_{mimesis_locale.value}"))
        return found


def _mimesis_address(lang: str, a: mimesis.Address) -> str:
    if lang == "en":
        return f"{a.address()}\n{a.city()}, {a.state(abbr=True)} {a.postal_code()}"
    if lang in ("de", "fr"):
        return f"{a.address()}\n{a.postal_code()} {a.city()}"
    if lang == "zh":
        return f"{a.state()}{a.city()}{a.address()}"
    n = a.random
    place = f"〒{a.postal_code()} {a.state()}{a.city()}{a.street_name()}"  # drawn in this order: keep it
    return f"{place}{n.randint(1, 9)}-{n.randint(1, 30)}-{n.randint(1, 20)}"


# ------------------------------------------------------------------------------------------------------------ items


_PART = re.compile(r"(\{\w+\})")


def fill(frame: str, passage: str, lang: str, values: Values, rng: random.Random) -> tuple[str, list[dict], list[dict]]:
    """The frame's text with the passage and generated values in place, and the labelled spans of the values."""
    if "{s}" not in frame and "{s_lower}" not in frame:
        glue = "" if lang in CJK else " "
        frame = f"{{s}}{glue}{frame}" if rng.random() < 0.5 else f"{frame}{glue}{{s}}"
    return fill_slots(frame, passage, lang, values, rng)


def fill_slots(
    frame: str, passage: str, lang: str, values: Values, rng: random.Random
) -> tuple[str, list[dict], list[dict]]:
    """Every {slot} of the frame replaced ({s}: the passage), recording where each value lands."""
    text, spans, decoys = "", [], []
    for part in _PART.split(frame.replace("{{", "\x00").replace("}}", "\x01")):
        if not (part.startswith("{") and part.endswith("}")):
            text += part.replace("\x00", "{").replace("\x01", "}")
            continue
        slot = part[1:-1]
        if slot in ("s", "s_lower"):
            text += passage[:1].lower() + passage[1:] if slot == "s_lower" and lang not in CJK else passage
            continue
        base = slot.rstrip("0123456789")
        if base == "person":
            title, value, subtype = values.names.person(rng)
            text += title
        else:
            value, subtype = values.make(base)
        kind = SLOT_TYPE.get(base, base)
        record = {"start": len(text), "end": len(text) + len(value), "subtype": subtype}
        if kind in DECOY_SLOTS:
            decoys.append({**record, "kind": kind})
        else:
            spans.append({**record, "type": kind})
        text += value
    return text, spans, decoys


def insert_line(window: str, line: str, rng: random.Random) -> tuple[str, int]:
    """The code window with `line` put at a random line boundary, indented like the line after it; and where the
    inserted line starts."""
    lines = window.split("\n")
    at = rng.randint(0, len(lines))
    following = lines[at] if at < len(lines) else ""
    indent = following[: len(following) - len(following.lstrip())]
    head = "\n".join(lines[:at]) + ("\n" if at else "")
    tail = ("\n" + "\n".join(lines[at:])) if at < len(lines) else ""
    return head + indent + line + tail, len(head) + len(indent)


def item(identifier: str, lang: str, kind: str, frame_id: str, split: str, passage: Passage, text: str,
         spans: list[dict], decoys: list[dict], code_language: str | None = None) -> dict:  # fmt: skip
    return {
        "id": identifier,
        "split": split,
        "lang": lang,
        "domain": "code" if code_language else "general",
        "code_language": code_language,
        "kind": kind,
        "frame": frame_id,
        "source": passage.source,
        "text": text,
        "spans": spans,
        "decoys": decoys,
    }


def prose_items(lang: str, passages: dict[str, list[Passage]], books: dict[str, NameBook]) -> Iterator[dict]:
    """Items of one language: each PII kind and decoy kind through its frames, and clean passages."""
    jobs = [(kind, FRAMES[lang][kind], COUNTS[kind]) for kind in PII_TYPES]
    jobs += [(f"decoy:{kind}", DECOY_FRAMES[lang][kind], COUNTS["decoy"]) for kind in DECOY_SLOTS]
    for kind, frames, count in jobs:
        rng = rng_for(lang, kind)
        values = {split: Values(lang, rng, books[split]) for split in ("dev", "test")}
        for index in range(count):
            frame_index = index % len(frames)
            split = "dev" if frame_index % DEV_EVERY == 0 else "test"
            passage = rng.choice(passages[split])
            text, spans, decoys = fill(frames[frame_index], passage.text, lang, values[split], rng)
            name = kind.replace("decoy:", "decoy-")
            yield item(f"{lang}-{name}-{index:04d}", lang, kind, f"{kind}/{frame_index}", split, passage, text,
                       spans, decoys)  # fmt: skip
    rng = rng_for(lang, "clean")
    for index in range(COUNTS["clean"]):
        passage = rng.choice(passages["dev" if index % DEV_EVERY == 0 else "test"])
        yield item(f"{lang}-clean-{index:04d}", lang, "clean", "clean", passage.split, passage, passage.text, [], [])


def code_items(windows: dict[str, list[Passage]]) -> Iterator[dict]:
    """Code windows with one line of PII or decoy put in, and untouched windows."""
    books = {split: NameBook("en", split) for split in ("dev", "test")}
    jobs = [(kind, CODE_COUNTS[kind]) for kind in ("secret", "email", "ip")]
    jobs += [(f"decoy:{kind}", CODE_COUNTS["decoy"]) for kind in CODE_DECOYS]
    languages = sorted(CODE_FRAMES)
    for kind, count in jobs:
        rng = rng_for("code", kind)
        values = {split: Values("code", rng, books[split]) for split in ("dev", "test")}
        for index in range(count):
            language = languages[index % len(languages)]
            frames = CODE_FRAMES[language][kind.replace("decoy:", "")]
            frame_index = (index // len(languages)) % len(frames)
            split = "dev" if frame_index % DEV_EVERY == 0 else "test"
            pool = [w for w in windows[language] if w.split == split] or windows[language]
            window = rng.choice(pool)
            line, spans, decoys = fill_slots(frames[frame_index], "", "code", values[split], rng)
            text, offset = insert_line(window.text, line, rng)
            shift = [{**s, "start": s["start"] + offset, "end": s["end"] + offset} for s in spans]
            shift_decoys = [{**d, "start": d["start"] + offset, "end": d["end"] + offset} for d in decoys]
            name = kind.replace("decoy:", "decoy-")
            yield item(f"code-{name}-{index:04d}", "code", kind, f"code/{language}/{kind}/{frame_index}", split,
                       window, text, shift, shift_decoys, language)  # fmt: skip
    rng = rng_for("code", "clean")
    for index in range(CODE_COUNTS["clean"]):
        language = languages[index % len(languages)]
        window = rng.choice(windows[language])
        yield item(f"code-clean-{index:04d}", "code", "clean", "clean", window.split, window, window.text, [], [],
                   language)  # fmt: skip


def build(out_dir: Path) -> Counter[str]:
    """Write the set and its README into `out_dir`; returns counts of labelled spans by type and language."""
    first_names = {n for lang in ("en", "de", "fr") for n in NameBook(lang, "dev").given + NameBook(lang, "test").given}
    first_names |= {n for locale in ("en_US", "en_GB", "de_DE", "fr_FR") for n in faker_names(locale)[0]}
    passages = carrier_passages(first_names)
    items: list[dict] = []
    for lang in LANGS:
        books = {split: NameBook(lang, split) for split in ("dev", "test")}
        items.extend(prose_items(lang, passages[lang], books))
    items.extend(code_items(code_windows()))
    counts: Counter[str] = Counter()
    lists = name_lists()
    listed = ListedNames(lists.first + lists.cjk_given, lists.last + lists.cjk_family)
    for record in items:
        _check(record)
        counts.update(f"{s['type']}/{record['lang']}" for s in record["spans"])
        counts.update(
            f"listed/{record['lang']}"
            for s in record["spans"]
            if s["type"] == "person" and listed.has(record["text"][s["start"] : s["end"]])
        )
        counts.update(f"decoy:{d['kind']}/{record['lang']}" for d in record["decoys"])
        counts[f"items/{record['lang']}"] += 1
        counts[f"split/{record['split']}"] += 1
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n" for record in items)
    (out_dir / SET_FILE).write_bytes(gzip.compress(lines.encode("utf-8"), compresslevel=9, mtime=0))
    (out_dir / "README.md").write_text(readme(counts, passages), encoding="utf-8")
    return counts


class ListedNames:
    """Whether every part of a name is in the tagger's name lists (for the README: how many labelled names the
    tagger could know from its lists, as against names it must find from context)."""

    def __init__(self, given: list[str], family: list[str]) -> None:
        self.given, self.family = set(given), set(family)

    def has(self, name: str) -> bool:
        parts = [p for p in re.split(r"[ \u3000]", name) if p and not p.endswith(".")]
        if all(p.isascii() or not _is_cjk_text(p) for p in parts):
            return all(p in self.given or p in self.family or p.split("-")[0] in self.family for p in parts)
        compact = "".join(parts)
        return any(compact[:k] in self.family and compact[k:] in self.given for k in range(1, len(compact)))


def _is_cjk_text(text: str) -> bool:
    return any("\u3040" <= c <= "\u30ff" or "\u3400" <= c <= "\u9fff" for c in text)


def _check(record: dict) -> None:
    """Spans lie inside the text, do not overlap, and cover no surrounding space."""
    marks = sorted(
        [(s["start"], s["end"]) for s in record["spans"]] + [(d["start"], d["end"]) for d in record["decoys"]]
    )
    for index, (start, end) in enumerate(marks):
        following = marks[index + 1] if index + 1 < len(marks) else None
        value = record["text"][start:end]
        if not value or value != value.strip() or (following is not None and following[0] < end):
            raise ValueError(f"bad span {start}-{end} in {record['id']}: {value!r}")


def readme(counts: Counter[str], passages: dict[str, dict[str, list[Passage]]]) -> str:
    kinds = [*PII_TYPES, *(f"decoy:{kind}" for kind in DECOY_SLOTS)]
    langs = [*LANGS, "code"]
    rows = [f"| {kind} | " + " | ".join(str(counts[f"{kind}/{lang}"]) for lang in langs) + " |" for kind in kinds]
    rows.append("| items | " + " | ".join(str(counts[f"items/{lang}"]) for lang in langs) + " |")
    rows.append(
        "| person names whose every part is in the tagger's name lists | "
        + " | ".join(str(counts[f"listed/{lang}"]) for lang in langs)
        + " |"
    )
    sources = ", ".join(f"{lang} {sum(len(p) for p in passages[lang].values())}" for lang in LANGS)
    header = __doc__.split("\n\n", 1)[1].rsplit("\n\n    python", 1)[0]
    return (
        "# Labelled PII set\n\n"
        f"`{SET_FILE}`: one JSON object per item. Built by `scripts/build_labelled_pii.py` (see there for every "
        "frame and generator); evaluated by `pretrain_eval/stage_quality/pii.py`, explained in "
        "`docs/stage-quality/pii.md`.\n\n" + header + "\n\n## Fields\n\n"
        "- `id`, `split` (`dev`: looked at while improving the stage; `test`: never), `lang` (en, de, fr, zh, ja, or "
        "`code`), `domain` (`general` or `code`), `code_language`, `kind` (the PII type or `decoy:KIND` the item was "
        "made for, or `clean`: a real passage with nothing put in), `frame` (which frame), `source` (the demo "
        "source or code file the passage comes from), `text`.\n"
        "- `spans`: `{start, end, type, subtype}` character offsets (Python string indices) of every PII value; "
        "`type` is one of the stage's kinds (email, phone, ip, card, iban, national_id, secret, person, address), "
        "`subtype` says which format or origin (e.g. `fr_international`, `jp_my_number`, `jwt`, `zh_name`).\n"
        "- `decoys`: `{start, end, kind, subtype}` of every value that must not be flagged.\n\n"
        f"## Counts\n\nCarrier passages available: {sources}; items per split: dev {counts['split/dev']}, test "
        f"{counts['split/test']}.\n\n"
        "| labelled spans | "
        + " | ".join(langs)
        + " |\n| --- |"
        + " ---: |" * len(langs)
        + "\n"
        + "\n".join(rows)
        + "\n\n"
        "## Sources and licences\n\n"
        "- Carrier sentences: the demo corpus (`pretrain_core/data/demo/SOURCES.md`): Debian FAQ (Debian FAQ licence, "
        "verbatim "
        "and modified copies permitted), Debian Administrator's Handbook (GPL-2+ or CC-BY-SA-3.0), Jargon File "
        "(public domain); code windows from `pretrain_core/data/demo/code` (licences per project there).\n"
        "- Names and addresses: Faker (MIT) and mimesis (MIT) locale data.\n"
        "- Every number, key and token is generated: none belongs to anyone.\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    return build_or_check(build, DEFAULT_OUT, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
