"""The memory page's shared texts in English and Chinese; each page module adds its own
(``STRINGS``, keys ``mem.<page>.<what>``). A test checks both languages have every key."""

MEMORY_STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "mem.nav.status": "Status",
        "mem.nav.profile": "Profile",
        "mem.nav.blocks": "Short-term",
        "mem.nav.events": "Long-term events",
        "mem.nav.conflicts": "Conflicts",
        "mem.nav.audit": "Usage audit",
        "mem.nav.jobs": "Jobs",
        "mem.nav.settings": "Settings",
        "mem.nav.raw": "Raw data",
        "mem.space": "Memory space",
        "mem.space.choose": "Show",
        "mem.prev": "Newer",
        "mem.next": "Older",
        "mem.page": "Page {n}",
        "mem.none": "Nothing here yet.",
    },
    "zh": {
        "mem.nav.status": "状态",
        "mem.nav.profile": "常驻画像",
        "mem.nav.blocks": "短期记忆",
        "mem.nav.events": "长期记忆",
        "mem.nav.conflicts": "冲突",
        "mem.nav.audit": "使用记录",
        "mem.nav.jobs": "后台任务",
        "mem.nav.settings": "设置",
        "mem.nav.raw": "原始数据",
        "mem.space": "记忆空间",
        "mem.space.choose": "查看",
        "mem.prev": "较新",
        "mem.next": "较早",
        "mem.page": "第 {n} 页",
        "mem.none": "这里还没有内容。",
    },
}
