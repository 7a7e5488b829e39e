"""Closed word categories a question can name: countries, US states, cities, martial arts, sports.

"Which European countries has Maria been to?" shares no word with "took this pic in Spain".
When a question names one of these categories (in English or Chinese), the category's
members join the query as weak terms (``category_terms``), so messages naming a member can
rank without naming the category. Only closed, general classes are listed (a gazetteer and
two lists of sports): open ones such as "activities" are too broad (measured in
docs/retrieval-experiments.md). Members are single distinctive words ("york" for New
York); Chinese members contribute their character pairs only, since a single character
("西" of 西班牙) is far too common to stand for the member.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from .search_terms import tokenize

_EUROPE = """albania andorra austria belarus belgium bosnia bulgaria croatia cyprus czechia czech
denmark estonia finland france germany greece hungary iceland ireland italy kosovo latvia
liechtenstein lithuania luxembourg malta moldova monaco montenegro netherlands holland macedonia
norway poland portugal romania russia serbia slovakia slovenia spain sweden switzerland ukraine
england scotland wales britain uk 阿尔巴尼亚 安道尔 奥地利 白俄罗斯 比利时 波斯尼亚 保加利亚
克罗地亚 塞浦路斯 捷克 丹麦 爱沙尼亚 芬兰 法国 德国 希腊 匈牙利 冰岛 爱尔兰 意大利 科索沃
拉脱维亚 列支敦士登 立陶宛 卢森堡 马耳他 摩尔多瓦 摩纳哥 黑山 荷兰 马其顿 挪威 波兰 葡萄牙
罗马尼亚 俄罗斯 塞尔维亚 斯洛伐克 斯洛文尼亚 西班牙 瑞典 瑞士 乌克兰 英格兰 苏格兰 威尔士 英国"""
_ASIA = """china japan korea india pakistan bangladesh vietnam thailand indonesia philippines
malaysia singapore cambodia laos myanmar nepal bhutan mongolia taiwan sri lanka afghanistan
iran iraq israel jordan lebanon syria turkey saudi arabia emirates uae qatar kuwait oman yemen
kazakhstan uzbekistan 中国 日本 韩国 朝鲜 印度 巴基斯坦 孟加拉 越南 泰国 印度尼西亚 印尼 菲律宾
马来西亚 新加坡 柬埔寨 老挝 缅甸 尼泊尔 不丹 蒙古 台湾 斯里兰卡 阿富汗 伊朗 伊拉克 以色列 约旦
黎巴嫩 叙利亚 土耳其 沙特 阿联酋 卡塔尔 科威特 阿曼 也门 哈萨克斯坦 乌兹别克斯坦"""
_AFRICA = """egypt morocco algeria tunisia libya nigeria kenya ethiopia ghana tanzania uganda
rwanda senegal cameroon angola zambia zimbabwe botswana namibia madagascar mozambique sudan
somalia 埃及 摩洛哥 阿尔及利亚 突尼斯 利比亚 尼日利亚 肯尼亚 埃塞俄比亚 加纳 坦桑尼亚 乌干达
卢旺达 塞内加尔 喀麦隆 安哥拉 赞比亚 津巴布韦 博茨瓦纳 纳米比亚 马达加斯加 莫桑比克 苏丹 索马里
南非"""
_AMERICAS = """usa america canada mexico guatemala honduras nicaragua panama cuba jamaica haiti
dominican bahamas brazil argentina chile peru colombia venezuela ecuador bolivia paraguay
uruguay 美国 加拿大 墨西哥 危地马拉 洪都拉斯 尼加拉瓜 巴拿马 古巴 牙买加 海地 多米尼加 巴哈马
巴西 阿根廷 智利 秘鲁 哥伦比亚 委内瑞拉 厄瓜多尔 玻利维亚 巴拉圭 乌拉圭"""
_OCEANIA = """australia zealand fiji samoa tonga 澳大利亚 澳洲 新西兰 斐济 萨摩亚 汤加"""
_US_STATES = """alabama alaska arizona arkansas california colorado connecticut delaware florida
georgia hawaii idaho illinois indiana iowa kansas kentucky louisiana maine maryland
massachusetts michigan minnesota mississippi missouri montana nebraska nevada hampshire jersey
carolina dakota ohio oklahoma oregon pennsylvania rhode tennessee texas utah vermont virginia
wisconsin wyoming 阿拉巴马 阿拉斯加 亚利桑那 阿肯色 加利福尼亚 加州 科罗拉多 康涅狄格 特拉华
佛罗里达 佐治亚 夏威夷 爱达荷 伊利诺伊 印第安纳 艾奥瓦 爱荷华 堪萨斯 肯塔基 路易斯安那 缅因
马里兰 马萨诸塞 密歇根 明尼苏达 密西西比 密苏里 蒙大拿 内布拉斯加 内华达 新罕布什尔 新泽西
新墨西哥 纽约州 北卡罗来纳 南卡罗来纳 北达科他 南达科他 俄亥俄 俄克拉何马 俄勒冈 宾夕法尼亚
罗得岛 田纳西 得克萨斯 德克萨斯 犹他 佛蒙特 弗吉尼亚 威斯康星 怀俄明 华盛顿州"""
_CITIES = """paris london rome berlin madrid barcelona lisbon amsterdam vienna prague budapest
warsaw athens dublin edinburgh venice florence milan naples munich hamburg zurich geneva
brussels copenhagen stockholm oslo helsinki moscow istanbul tokyo kyoto osaka seoul beijing
shanghai shenzhen guangzhou hong kong taipei bangkok hanoi manila jakarta mumbai delhi dubai
cairo sydney melbourne auckland toronto vancouver montreal york chicago boston seattle
portland francisco angeles vegas miami orlando austin dallas houston denver atlanta nashville
orleans philadelphia detroit phoenix honolulu rio janeiro buenos aires lima bogota havana
巴黎 伦敦 罗马 柏林 马德里 巴塞罗那 里斯本 阿姆斯特丹 维也纳 布拉格 布达佩斯 华沙 雅典 都柏林
爱丁堡 威尼斯 佛罗伦萨 米兰 那不勒斯 慕尼黑 汉堡 苏黎世 日内瓦 布鲁塞尔 哥本哈根 斯德哥尔摩
奥斯陆 赫尔辛基 莫斯科 伊斯坦布尔 东京 京都 大阪 首尔 北京 上海 深圳 广州 香港 台北 曼谷 河内
马尼拉 雅加达 孟买 德里 迪拜 开罗 悉尼 墨尔本 奥克兰 多伦多 温哥华 蒙特利尔 纽约 芝加哥 波士顿
西雅图 波特兰 旧金山 洛杉矶 拉斯维加斯 迈阿密 奥兰多 奥斯汀 达拉斯 休斯顿 丹佛 亚特兰大
纳什维尔 新奥尔良 费城 底特律 凤凰城 檀香山 里约热内卢 布宜诺斯艾利斯 利马 波哥大 哈瓦那"""
_MARTIAL_ARTS = """karate judo taekwondo kickboxing boxing jiujitsu jujitsu kung aikido muay
wrestling mma krav capoeira hapkido kendo sambo wushu 空手道 柔道 跆拳道 踢拳 拳击 柔术 功夫
合气道 泰拳 摔跤 摔角 综合格斗 格斗 剑道 武术 太极"""
_SPORTS = """soccer football basketball baseball softball volleyball tennis golf hockey rugby
cricket badminton swimming running cycling skiing snowboarding surfing skating climbing
rowing sailing kayaking bowling gymnastics marathon triathlon lacrosse squash fencing archery
足球 篮球 棒球 垒球 排球 网球 高尔夫 冰球 曲棍球 橄榄球 板球 羽毛球 乒乓球 游泳 跑步 骑行 自行车
滑雪 冲浪 滑冰 攀岩 划船 帆船 皮划艇 保龄球 体操 马拉松 铁人三项 击剑 射箭"""


@dataclass(frozen=True)
class Category:
    """A class of things a question can ask for, and its listed members."""

    name: str
    cue: re.Pattern[str]
    members: str
    narrows: str = ""  # the broader category this one replaces when both are named


_COUNTRIES = " ".join((_EUROPE, _ASIA, _AFRICA, _AMERICAS, _OCEANIA))
CATEGORIES: tuple[Category, ...] = (
    Category("european countries", re.compile(r"\beuropean? countr|欧洲(?:的)?国家"), _EUROPE,
             narrows="countries"),
    Category("asian countries", re.compile(r"\basian? countr|亚洲(?:的)?国家"), _ASIA,
             narrows="countries"),
    Category("african countries", re.compile(r"\bafrican? countr|非洲(?:的)?国家"), _AFRICA,
             narrows="countries"),
    Category("countries", re.compile(r"\bcountr(?:y|ies)\b|国家(?!公园)"), _COUNTRIES),
    Category("us states", re.compile(r"\bstates\b|\b(?:which|what) state\b|(?:哪|几)[些个]州"),
             _US_STATES),
    Category("cities", re.compile(r"\bcit(?:y|ies)\b|城市"), _CITIES),
    Category("martial arts", re.compile(r"\bmartial arts?\b|武术"), _MARTIAL_ARTS),
    Category("sports", re.compile(r"\bsports?\b|体育|运动项目"), _SPORTS),
)  # fmt: skip


def named_categories(question: str) -> list[Category]:
    """The categories a question names, without those a named narrower one replaces."""
    text = question.lower()
    found = [category for category in CATEGORIES if category.cue.search(text)]
    replaced = {category.narrows for category in found}
    return [category for category in found if category.name not in replaced]


def category_terms(question: str) -> list[str]:
    """Search tokens of the members of every category the question names, without repeats."""
    return list(dict.fromkeys(t for c in named_categories(question) for t in _member_tokens(c)))


@lru_cache(maxsize=len(CATEGORIES))
def _member_tokens(category: Category) -> tuple[str, ...]:
    tokens = tokenize(category.members)
    return tuple(dict.fromkeys(t for t in tokens if not t.startswith("h1:")))


__all__ = ["CATEGORIES", "Category", "category_terms", "named_categories"]
