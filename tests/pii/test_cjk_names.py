"""Chinese and Japanese names before titles and honorifics, and the common words before them that are not names."""

from __future__ import annotations

import pytest

from pretrain_core.pii.cjk_names import CjkNames, has_cjk_cue
from pretrain_core.pii.name_lists import chinese_surnames, japanese_names


@pytest.fixture(scope="module")
def titled() -> CjkNames:
    family, given = japanese_names()
    return CjkNames(chinese_surnames(), family, given)


def names(titled: CjkNames, text: str) -> list[str]:
    return [text[s.start : s.end] for s in titled.find(text)]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("上周我在大会上见到了王伟先生，他介绍了新版本。", "王伟"),
        ("欧阳浩宇教授补充说：这个问题已经修复。", "欧阳浩宇"),  # a compound surname
        ("这个补丁由李娜老师审阅。", "李娜"),
        ("この節は佐藤花子さんが校閲しました。", "佐藤花子"),
        ("メーリングリストで岩永 聖氏が指摘したように、", "岩永 聖"),
        ("先週の勉強会で林\u3000ナオミ先生にお会いしました。", "林\u3000ナオミ"),
        ("会議で村上 あずさ先生が発表しました。", "村上 あずさ"),  # a given name in hiragana
        ("上周我见到了凤雨先生。", "凤雨"),  # a surname of the Hundred Family Surnames that Faker lacks
    ],
)
def test_names_before_titles_are_found(titled: CjkNames, text: str, name: str) -> None:
    assert names(titled, text) == [name]


@pytest.mark.parametrize(
    "text",
    [
        "这位先生请留步。",  # "this gentleman"
        "各位老师和同学，大家好。",
        "皆さん、こんにちは。お客様各位",  # "everyone", "customers"
        "Debian 是一个自由的操作系统。",  # no title at all
    ],
)
def test_common_words_before_titles_are_not_names(titled: CjkNames, text: str) -> None:
    assert names(titled, text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("这一节由周敏审校。", ["周敏"]),  # a credit
        ("文档很长。\n——韩静怡", ["韩静怡"]),  # an attribution dash
        ("明月几时有。\n    -- 王安石《登飞来峰》", ["王安石"]),  # a byline: the poet, then the work's title
        ("谢谢大家。\n\n此致\n欧阳浩宇\n", ["欧阳浩宇"]),  # a signature under a closing formula
        ("联系人：王伟、李娜和张敏", ["王伟", "李娜", "张敏"]),  # a label and the list it starts
        ("这是说明。王伟和李娜都建议先升级。", ["王伟", "李娜"]),
        ("昨天，赵敏表示会议推迟。", ["赵敏"]),
        ("住所は下記の通り。\n中村 美咲\n電話：03-1234-5678", ["中村 美咲"]),  # a Japanese signature line
        ("担当者は佐藤 花子です。", ["佐藤 花子"]),
        ("作者：鲁迅（1881－1936）", ["鲁迅"]),  # a label, the name, then an opening bracket
        ("主讲人：张敏【线上】", ["张敏"]),
        ("孟子曰：鱼，我所欲也。", ["孟子"]),  # classical speech: X said
        ("问仁。颜渊对曰：请事斯语矣。", ["颜渊"]),  # X replied: the name, not 颜渊对
        ("孟武伯问：“子路仁乎？”", ["孟武伯"]),  # X asked, then the question
    ],
)
def test_names_next_to_other_cues_are_found(titled: CjkNames, text: str, expected: list[str]) -> None:
    assert names(titled, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "公司表示将继续支持。",  # a common word that starts with a surname character
        "方法说明如下。",  # 说明 is not "says"
        "本节由下面的表格审校。",  # a credit to no name
        "概要\n設定方法\nインストール",  # Japanese headings on lines of their own
        "——这是一个很长的引用句子",
        "子曰：学而时习之。",  # "the Master": one character, a role
        "君子曰：学不可以已。",  # "the gentleman", not a surname and a name
        "或曰：以德报怨，何如？",
        "借问路旁名利客，何如此处学长生。",  # "may I ask": no colon, no question quoted
    ],
)
def test_cue_words_without_a_name_find_nothing(titled: CjkNames, text: str) -> None:
    assert names(titled, text) == []


def test_the_cheap_test_sees_cues_of_both_languages() -> None:
    assert has_cjk_cue("王伟先生") and has_cjk_cue("田中さん") and has_cjk_cue("本节由王伟审校")
    assert not has_cjk_cue("Herr Weber")
