"""A small built-in gazetteer (English and Chinese): continents, countries and major cities.

It is a reading aid, not a world atlas (names that are as often first names, Jordan or
Florence, are left out): a name found here is a place even without a cue
("Sweden was cold"), so it can never be typed a person. Anything else needs a place cue
("in / to / from …", 住在 / 去 …) to become a place.
"""

from .text import word_set

_EN = """Africa Antarctica Asia Europe Oceania America Australia
Argentina Austria Belgium Brazil Canada Chile China Colombia Croatia Cuba Czechia Denmark
Egypt England Estonia Ethiopia Finland France Germany Ghana Greece Hungary Iceland India
Indonesia Iran Iraq Ireland Israel Italy Jamaica Japan Kenya Korea Latvia Lebanon
Lithuania Luxembourg Malaysia Mexico Morocco Nepal Netherlands Nigeria Norway Pakistan Peru
Philippines Poland Portugal Romania Russia Scotland Senegal Serbia Singapore Slovakia Slovenia
Spain Sweden Switzerland Taiwan Tanzania Thailand Turkey Uganda Ukraine Uruguay Venezuela
Vietnam Wales
Amsterdam Athens Atlanta Auckland Bangkok Barcelona Beijing Berlin Boston Brussels Budapest
Cairo Chicago Copenhagen Dallas Delhi Denver Dubai Dublin Edinburgh Geneva Hamburg
Helsinki Houston Istanbul Jakarta Kyoto Lagos Lisbon London Madrid Manila Melbourne Miami
Milan Montreal Moscow Mumbai Munich Nairobi Naples Oslo Osaka Paris Prague Porto Rome Seattle
Seoul Shanghai Stockholm Sydney Taipei Tokyo Toronto Vancouver Venice Vienna Warsaw Zurich
Hawaii Alaska California Texas Florida Oregon Ohio Bali Yosemite"""
_EN_MULTI = (
    "New York", "Los Angeles", "San Francisco", "San Diego", "Hong Kong", "New Zealand",
    "South Africa", "South Korea", "North America", "South America", "United States",
    "United Kingdom", "Buenos Aires", "Cape Town", "Mexico City", "Rio de Janeiro",
    "Las Vegas", "New Orleans", "Washington DC", "Sri Lanka", "Costa Rica", "Saudi Arabia",
)  # fmt: skip
_ZH = """亚洲 欧洲 非洲 美洲 北美 南美 大洋洲 南极洲
中国 日本 韩国 美国 英国 法国 德国 意大利 西班牙 葡萄牙 荷兰 比利时 瑞士 瑞典 挪威 丹麦 芬兰
冰岛 爱尔兰 奥地利 波兰 希腊 土耳其 俄罗斯 乌克兰 加拿大 墨西哥 巴西 阿根廷 智利 秘鲁 澳大利亚
澳洲 新西兰 印度 泰国 越南 新加坡 马来西亚 印尼 印度尼西亚 菲律宾 埃及 肯尼亚 南非 以色列 伊朗
北京 上海 广州 深圳 杭州 南京 苏州 成都 重庆 武汉 西安 天津 长沙 厦门 青岛 大连 昆明 哈尔滨
沈阳 郑州 济南 合肥 福州 宁波 无锡 三亚 拉萨 香港 澳门 台北 东京 大阪 京都 首尔 曼谷 巴黎 伦敦
柏林 罗马 米兰 威尼斯 马德里 巴塞罗那 里斯本 波尔图 阿姆斯特丹 维也纳 布拉格 雅典 莫斯科 纽约
洛杉矶 旧金山 西雅图 芝加哥 波士顿 温哥华 多伦多 悉尼 墨尔本 迪拜 开罗 伊斯坦布尔 斯德哥尔摩
哥本哈根 奥斯陆 赫尔辛基 苏黎世 日内瓦 慕尼黑 云南 四川 广东 浙江 江苏 福建 山东 海南 新疆
西藏 贵州 广西 湖南 湖北 河南 河北 东北"""
PLACES = word_set(_EN) | frozenset(_EN_MULTI) | word_set(_ZH)
HAN_PLACES = tuple(p for p in PLACES if not p.isascii())


def is_known_place(name: str) -> bool:
    return name.strip() in PLACES
