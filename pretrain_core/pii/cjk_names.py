"""Chinese and Japanese names found through the cues around them and the family name that starts them: a title
or honorific after the name (王伟先生, 欧阳浩宇教授, 佐藤花子さん, 岩永 聖氏, 村上 あずさ先生), a credit
(本节由周敏审校), an attribution dash (——韩静怡, ――山田 かな), a signature line under a closing formula
(此致\n欧阳浩宇), and in Japanese a line that is nothing but a family and a given name (a letter's signature block).

Names in Chinese and Japanese are not set off by spaces or capitals, and given names are an open set, so a tagger
that has not seen a given name often misses it. A cue right next to a run of characters that starts with a known
family name and has a name's length is strong evidence on its own, whatever the given name: these spans are added
to the tagger's. Only cue occurrences are looked at (a few regex scans), so text without them costs almost nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pretrain_core.pii.spans import Span

_KANA = re.compile(r"[\u3040-\u30ff]")
_ZH_TITLES = re.compile(r"先生|女士|小姐|老师|教授|博士|同学|经理|主任|医生|律师|同志|总监|师傅")
_JA_TITLES = re.compile(r"さん|様|氏|先生|君|ちゃん|教授|部長|課長|社長|殿")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々"
_NAME_CHAR = re.compile(f"[{_HAN}\u30a1-\u30fa\u30fc]")
_HAN_CHAR = re.compile(f"[{_HAN}]")
_JA_NAME_CHAR = re.compile(f"[{_HAN}\u3041-\u3096\u30a1-\u30fa\u30fc]")  # Japanese given names may be hiragana
_SEPARATORS = (" ", "\u3000", "・")
# A Japanese name: a family name in kanji, an optional separator, and a given name in kanji, hiragana or katakana.
_JA_NAME = re.compile(
    f"([{_HAN}]{{1,3}})([ \u3000・]?)([{_HAN}]{{1,3}}|[\u3041-\u3096]{{2,4}}|[\u30a1-\u30fa\u30fc]{{2,5}})?"
)
# Chinese function characters that are also surnames (由, 和, 于, ...): never taken as part of a name before a
# title, where they are nearly always grammar ("由李娜老师", "各位老师和同学").
_ZH_FUNCTION = frozenset("由和与及向给把被让于在是对从将为了的")
_LONGEST_RUN = 7  # characters looked at before a title (a family and a given name of up to three each, a space)
# Cues after which (or around which) a whole name stands. Each captures the candidate run; the run must then have
# a name's shape. Credits: "由 X 审校" (reviewed, translated, written, maintained ... by X).
_ZH_CREDIT = re.compile(
    f"由([{_HAN}]{{2,4}})(?:审校|校对|审阅|审核|翻译|编译|编写|撰写|执笔|编辑|整理|维护|提供|负责|主持|签署|设计|开发|主讲)"
)
# An attribution dash at the start of a line ("——鲁迅", "――夏目 漱石", "-- 李白《静夜思》"), the name alone up to
# the line's end or the title of the work it wrote.
_LINE_NAME = (
    r"[ \t\u3000]*([^\s，。、,.()（）：:《》]{2,5}(?:[ \u3000][^\s，。、,.()（）：:《》]{1,4})?)"
    r"[ \t\u3000]*(?:《[^》\n]{1,30}》[ \t\u3000]*)?(?=\n|$)"
)
_DASH = re.compile(r"(?:^|\n)[ \t\u3000]*(?:——|――|──|—|--)" + _LINE_NAME)
# A signature line under a closing formula of a letter ("此致\n王伟", "よろしくお願いします。\n田中 太郎").
_CLOSING = re.compile(
    r"(?:此致|敬礼|谢谢|祝好|顺祝商祺|敬上|敬具|草々|よろしくお願い(?:いた)?します)[！!。．]?[ \t\u3000]*\n+"
    + _LINE_NAME
)
# Labels and words a name follows: "作者：", "联系人：", "感谢", "据" ... (lists of names after them too:
# "出席：王伟、李娜").
_ZH_BEFORE = re.compile(
    r"(?:作者|联系人|收件人|收货人|寄件人|发件人|译者|校对|审校|编辑|摄影|讲师|主讲人|负责人|经办人|申请人|签名|署名"
    r"|抄送|出席|参会人员|记者|通讯员|维护者|开发者|报告人|主持人|撰稿|翻译|译|From)[：:][ \t\u3000]*"
    r"|(?:联系人|联络人|负责人|对接人|协调人|协调员|维护者)(?:是|为)|发送给|发给|寄给|转交|请联系"
    r"|协调员|协调人|工程师|记者|主编|同事|见到了|遇到了|拜访了|采访了|认识了"
    r"|文[／/]|感谢|鸣谢|致谢|据|尊敬的|亲爱的"
)
_JA_BEFORE = re.compile(
    r"(?:著者|作者|連絡先|出席者|写真|文|担当者?|作成者|宛先|差出人|送信者|講師|司会|記者|翻訳|監修|校閲|投稿者|発表者"
    r"|翻訳者?|訳|From|CC|ＣＣ)[：:][ \t\u3000]*|(?:担当者?|窓口|連絡先|問い合わせ先)は|同僚の"
    r"|(?:コーディネーター|マネージャー|リーダー|責任者|担当者?)の"
)
# Words a name says or does, right after it: the name then starts a clause ("，王伟表示", "据李娜介绍").
_ZH_AFTER = re.compile(
    f'(?:^|(?<=[\n，。；！？：、（“"\\s]))([{_HAN}]{{2,4}})'
    r"(?:说(?![明法])|表示|指出|认为|强调|介绍|提到|写道|评论道?|补充|回答|解释|建议|提议|你好|您好)"
)
# Classical Chinese speech: "X曰" / "X对曰" / "X问曰" (X said, replied, asked), and "X问：" (X asked, then the
# question), how the classics quote a person ("孟子曰", "定公问："). Shortest run first, so "颜渊对曰" gives 颜渊,
# not 颜渊对.
_ZH_SAID_CLASSICAL = re.compile(f'(?:^|(?<=[\n，。；！？：、（“"\\s]))([{_HAN}]{{2,4}}?)(?:对曰|问曰|曰|问[：:])')
# Two names joined by "and" and followed by "both" ("王伟和李娜都建议").
_ZH_PAIR = re.compile(
    f'(?:^|(?<=[\n，。；！？：、（“"\\s]))([{_HAN}]{{2,4}})[和与及跟]([{_HAN}]{{2,4}})(?:都|均|一致|两人|二人|也都)'
)
_JA_AFTER = re.compile(r"によると|によれば|のコメント|が校閲|が指摘|は次のように")
# Characters that end a name after a label: punctuation, list words, a line break, the end, and in Chinese the
# opening bracket of a note or a title ("鲁迅（1881－1936）", "李白《静夜思》").
_ZH_NAME_END = frozenset("、，,。；;：:和与及的）)（(《【[\n 　！!？?说表等")
_JA_NAME_END = frozenset("、，,。；;：:）)\n 　！!？?さ様氏君先はがをにのともへやでだま")
# Common words that begin with a character that is also a surname ("公司表示", "有人认为").
_ZH_COMMON = frozenset(
    [
        "公司",
        "有人",
        "文章",
        "方法",
        "安全",
        "国家",
        "时间",
        "明显",
        "高级",
        "东西",
        "成功",
        "平台",
        "通过",
        "都是",
        "管理",
        "应用",
        "程序",
        "官方",
        "专家",
        "研究",
        "用户",
        "作者",
        "开发",
        "项目",
        "社区",
        "报告",
        "调查",
        "数据",
        "结果",
        "事实",
        "历史",
        "经验",
        "常见",
        "经常",
        "通常",
        "金融",
        "政府",
        "万一",
        "于是",
        "和平",
        "向来",
        "后来",
        "相关",
        "文档",
        "文件",
        "明确",
        "计划",
        "和谐",
        "华人",
        "江湖",
        "能够",
        "上述",
        "其他",
        "其中",
        "大家",
        "他们",
        "我们",
        "你们",
        "她们",
        "人们",
        "有些",
        "许多",
    ]
)
# A line that is only a Japanese family name, a separator and a given name (a signature block or an address label).
_JA_NAME_LINE = re.compile(
    f"^[ \t]*([{_HAN}]{{1,3}}[ \u3000][^\\s]{{1,5}})[ \t]*$|^[ \t]*([{_HAN}]{{2,5}})[ \t]*$", re.M
)
# Chinese compound surnames (from the Hundred Family Surnames), which a per-character list cannot hold.
ZH_COMPOUND_SURNAMES = frozenset(
    (
        "欧阳",
        "司马",
        "上官",
        "诸葛",
        "东方",
        "皇甫",
        "尉迟",
        "公孙",
        "慕容",
        "长孙",
        "宇文",
        "司徒",
        "司空",
        "夏侯",
        "令狐",
        "轩辕",
        "端木",
        "太叔",
        "申屠",
        "公冶",
        "澹台",
        "濮阳",
        "淳于",
        "单于",
        "钟离",
        "闻人",
        "呼延",
        "赫连",
        "万俟",
        "百里",
        "东郭",
        "南宫",
        "西门",
        "独孤",
        "拓跋",
        "完颜",
        "公羊",
        "梁丘",
        "左丘",
        "谷梁",
        "宰父",
        "仲孙",
        "鲜于",
        "闾丘",
        "亓官",
        "司寇",
        "巫马",
        "公西",
        "颛孙",
        "壤驷",
        "公良",
        "漆雕",
        "乐正",
        "第五",
        "羊舌",
        "微生",
        "东门",
    )
)


def has_cjk_cue(text: str) -> bool:
    """Whether the text holds a Han character at all (every name `CjkNames` finds starts with one): the cheap
    test before `CjkNames.find`, which spares Latin-script text its regex scans."""
    return _HAN_CHAR.search(text) is not None


class CjkNames:
    """Finds names next to cues, given the names it may trust: Chinese surnames (single characters and
    compounds) and Japanese family and given names."""

    def __init__(self, zh_surnames: Iterable[str], ja_family: Iterable[str], ja_given: Iterable[str] = ()) -> None:
        zh = set(zh_surnames)
        self.zh_single = frozenset(n for n in zh if len(n) == 1)
        self.zh_compound = frozenset(n for n in zh if len(n) == 2) | ZH_COMPOUND_SURNAMES
        self.ja_family = frozenset(ja_family)
        self.ja_given = frozenset(ja_given)

    def find(self, text: str) -> list[Span]:
        """Name spans next to cues, in text order, without overlaps."""
        japanese = _KANA.search(text) is not None
        spans = self._titled(text, _JA_TITLES if japanese else _ZH_TITLES, japanese)
        if japanese:
            spans += self._titled(text, _JA_AFTER, japanese)
            spans += self._after_labels(text, _JA_BEFORE, japanese)
        else:
            if "由" in text:
                spans += [self._span(m, 1) for m in _ZH_CREDIT.finditer(text) if self._zh_name(m.group(1))]
            spans += [self._span(m, 1) for m in _ZH_AFTER.finditer(text) if self._zh_name(m.group(1))]
            if "曰" in text or "问：" in text or "问:" in text:  # not every 问 ("问题": a question, a problem)
                spans += [self._span(m, 1) for m in _ZH_SAID_CLASSICAL.finditer(text) if self._zh_name(m.group(1))]
            for match in _ZH_PAIR.finditer(text):
                if self._zh_name(match.group(1)) and self._zh_name(match.group(2)):
                    spans += [self._span(match, 1), self._span(match, 2)]
            spans += self._after_labels(text, _ZH_BEFORE, japanese)
        if "\n" in text or "—" in text or "―" in text:
            for pattern in (_DASH, _CLOSING):
                for match in pattern.finditer(text):
                    name = match.group(1)
                    if self._ja_name(name) if japanese else self._zh_name(name):
                        spans.append(self._span(match, 1))
        if japanese and "\n" in text:
            for match in _JA_NAME_LINE.finditer(text):
                group = 1 if match.group(1) else 2
                if self._ja_name(match.group(group), listed_given=True):
                    spans.append(self._span(match, group))
        chosen: list[Span] = []
        for span in sorted(set(spans)):
            if not chosen or chosen[-1].end <= span.start:
                chosen.append(span)
        return chosen

    @staticmethod
    def _span(match: re.Match[str], group: int) -> Span:
        return Span(match.start(group), match.end(group), "person")

    def _after_labels(self, text: str, labels: re.Pattern[str], japanese: bool) -> list[Span]:
        """Names right after a label or cue word, and the further names of a list it starts ("王伟、李娜和张敏")."""
        spans = []
        for match in labels.finditer(text):
            position = match.end()
            while (length := self._name_length(text, position, japanese)) is not None:
                spans.append(Span(position, position + length, "person"))
                position += length
                if position >= len(text) or text[position] not in "、，,和与及":
                    break
                position += 1
        return spans

    def _name_length(self, text: str, position: int, japanese: bool) -> int | None:
        """The longest name starting at `position` that ends where a name may end."""
        ends = _JA_NAME_END if japanese else _ZH_NAME_END
        for length in range(8 if japanese else 4, 1, -1):
            candidate = text[position : position + length]
            if len(candidate) < length or not (position + length == len(text) or text[position + length] in ends):
                continue
            if self._ja_name(candidate) if japanese else self._zh_name(candidate):
                return length
        return None

    def _titled(self, text: str, titles: re.Pattern[str], japanese: bool) -> list[Span]:
        """Names right before a title or honorific (or a cue that follows names as titles do)."""
        name_char = _JA_NAME_CHAR if japanese else _NAME_CHAR
        spans = []
        for match in titles.finditer(text):
            run_start = match.start()
            while run_start > 0 and match.start() - run_start < _LONGEST_RUN:
                previous = text[run_start - 1]
                if not (name_char.match(previous) or (japanese and previous in _SEPARATORS)):
                    break
                run_start -= 1
            run = text[run_start : match.start()].lstrip("".join(_SEPARATORS))
            start = self._name_start(run, japanese)
            if start is not None:
                spans.append(Span(match.start() - len(run) + start, match.start(), "person"))
        return spans

    def _name_start(self, run: str, japanese: bool) -> int | None:
        """Where in `run` (the characters before a title) the name begins: the earliest family name that leaves a
        whole name of two to six characters (Chinese: a surname and one or two more)."""
        for start in range(len(run) - 1):
            rest = run[start:]
            if self._ja_name(rest) if japanese else self._zh_name(rest):
                return start
        return None

    def _zh_name(self, rest: str) -> bool:
        """A surname (not a function character such as 由) and one or two characters, none a function one."""
        letters = len(rest)
        compound = letters in (3, 4) and rest[:2] in self.zh_compound
        single = letters in (2, 3) and rest[0] in self.zh_single
        given = rest[2:] if compound else rest[1:]
        return (
            (compound or single)
            and rest not in _ZH_COMMON
            and rest[0] not in _ZH_FUNCTION
            and not _ZH_FUNCTION.intersection(given)
            and all("\u4e00" <= c <= "\u9fff" for c in rest)
        )

    def starts_with_family(self, name: str, japanese: bool) -> bool:
        """Whether `name` begins with a listed family name (Japanese) or surname (Chinese)."""
        if japanese:
            return any(name[:length] in self.ja_family for length in (1, 2, 3))
        return name[:1] in self.zh_single or name[:2] in self.zh_compound

    def _ja_name(self, rest: str, listed_given: bool = False) -> bool:
        """A family name in kanji, then (after an optional separator) a given name of kanji or kana, two to six
        letters in all. The family name must be listed, unless a separator sets off a given name that is listed
        or written in kana; with `listed_given`, the given name must be listed, or set off by a separator."""
        match = _JA_NAME.fullmatch(rest)
        if match is None:
            return False
        family, separator, given = match.groups()
        letters = len(family) + len(given or "")
        if not 2 <= letters <= 6:
            return False
        if separator and given and (given in self.ja_given or not _HAN_CHAR.match(given)):
            return True
        for length in range(1, len(family) + 1):
            head, tail = family[:length], family[length:] + (given or "")
            if head not in self.ja_family or (tail and separator and family[length:]):
                continue
            if not listed_given or (tail and (separator or tail in self.ja_given)):
                return True
        return False
