"""The texts of the long-term events pages and the conflicts queue, English and Chinese."""

from ...core.events.cards import EVENT_TYPES

_TYPES_ZH = {
    "decision": "决定",
    "release": "发布",
    "task_completed": "任务完成",
    "plan": "计划",
    "change": "变更",
    "cancellation": "取消",
    "incident": "故障",
    "meeting": "会议",
    "collaboration": "协作",
    "migration": "迁移",
    "other": "其他",
}
_RELATIONS = {
    "superseded_by": ("superseded by", "被其取代"),
    "supersedes": ("supersedes", "取代了"),
    "conflicts_with": ("conflicts with", "与之冲突"),
    "before": ("before", "早于"),
    "after": ("after", "晚于"),
    "related_to": ("related to", "相关"),
}
_TEXTS: dict[str, tuple[str, str]] = {
    "mem.events.title": ("Long-term events", "长期记忆"),
    "mem.events.q": ("Text", "文本"),
    "mem.events.since": ("From", "起始日期"),
    "mem.events.until": ("To", "截止日期"),
    "mem.events.participant": ("Participant", "参与者"),
    "mem.events.type": ("Type", "类型"),
    "mem.events.status": ("Status", "状态"),
    "mem.events.source": ("Source", "来源"),
    "mem.events.any": ("Any", "全部"),
    "mem.events.filter": ("Filter", "筛选"),
    "mem.events.clear": ("Clear", "清除"),
    "mem.events.when": ("When", "时间"),
    "mem.events.event": ("Event", "事件"),
    "mem.events.weight": ("Weight", "权重"),
    "mem.events.pinned": ("pinned", "已置顶"),
    "mem.events.none": ("No events match.", "没有匹配的事件。"),
    "mem.events.status.live": ("Live (active and superseded)", "有效（活跃与已被取代）"),
    "mem.events.status.active": ("active", "活跃"),
    "mem.events.status.superseded": ("superseded", "已被取代"),
    "mem.events.status.forgotten": ("forgotten", "已遗忘"),
    "mem.events.status.archived": ("archived", "已归档"),
    "mem.events.status.all": ("All", "全部状态"),
    "mem.events.source.conversation": ("Conversation", "对话"),
    "mem.events.source.agent": ("Agent", "智能体记录"),
    "mem.event.back": ("Back to the timeline", "返回时间线"),
    "mem.event.facts": ("Details", "详情"),
    "mem.event.id": ("Id", "编号"),
    "mem.event.mentioned": ("Mentioned at", "提及时间"),
    "mem.event.happened": ("Happened", "发生时间"),
    "mem.event.unknown": ("unknown", "未知"),
    "mem.event.precision": ("Precision", "精度"),
    "mem.event.basis": ("Basis", "依据"),
    "mem.event.temporal_status": ("Temporal status", "时间状态"),
    "mem.event.participants": ("Participants", "参与者"),
    "mem.event.scope": ("Scope", "范围"),
    "mem.event.criticality": ("Criticality", "重要性"),
    "mem.event.formed": ("Formed at turn", "形成轮次"),
    "mem.event.derived_by": ("Derived by", "提取者"),
    "mem.event.derived_offline": (
        "the offline model, after the model failed",
        "离线模型（模型调用失败后代为提取）",
    ),
    "mem.event.mentions": ("Mentions", "提及次数"),
    "mem.event.last_adopted": ("Last adopted at turn", "最近采用轮次"),
    "mem.event.weight_now": ("Weight now (turn {turn})", "当前权重（第 {turn} 轮）"),
    "mem.event.created": ("Created", "创建时间"),
    "mem.event.updated": ("Updated", "更新时间"),
    "mem.event.tags": ("Tags", "标签"),
    "mem.event.quotes": ("Quotes", "原文摘录"),
    "mem.event.versions": ("Versions, oldest first", "版本（从旧到新）"),
    "mem.event.this": ("this event", "当前事件"),
    "mem.event.links": ("Supersede and conflict links", "取代与冲突关系"),
    "mem.event.missing": ("(not found)", "（不存在）"),
    "mem.event.sources": ("Sources: the original messages", "来源：原始消息"),
    "mem.event.open_block": ("Open its block", "查看所在块"),
    "mem.event.unsealed": ("not sealed into a block yet", "尚未封存为块"),
    "mem.event.purged": ("purged", "已清除"),
    "mem.event.no_sources": ("This event cites no message.", "这个事件没有引用消息。"),
    "mem.event.adoptions": ("Adoption history", "采用记录"),
    "mem.event.no_adoptions": ("Not adopted yet.", "尚未被采用。"),
    "mem.event.batch": ("Batch", "批次"),
    "mem.event.turn": ("Turn", "轮次"),
    "mem.event.time": ("Time", "时间"),
    "mem.event.tool": ("Tool", "工具"),
    "mem.event.verdict": ("Verdict", "判定"),
    "mem.event.chart": ("Weight over turns", "权重随轮次变化"),
    "mem.event.chart_note": (
        "From turn {start} to turn {end}; dots mark adoptions.",
        "从第 {start} 轮到第 {end} 轮；圆点表示采用。",
    ),
    "mem.event.receipts": ("Receipts", "操作记录"),
    "mem.event.no_receipts": ("No action taken on it yet.", "还没有对它执行过操作。"),
    "mem.event.actions": ("Actions", "操作"),
    "mem.event.forget": ("Forget", "遗忘"),
    "mem.event.forget_confirm": (
        "Forget this event? It leaves every search and recall until it is restored.",
        "遗忘这个事件？在恢复之前，它不会出现在任何搜索和回忆中。",
    ),
    "mem.event.restore": ("Restore", "恢复"),
    "mem.event.pin": ("Pin", "置顶"),
    "mem.event.unpin": ("Unpin", "取消置顶"),
    "mem.event.correct": ("Correct", "更正"),
    "mem.event.correct_help": (
        "Writes a new event that supersedes this one; this one is kept as history.",
        "写入一个取代当前事件的新事件；当前事件作为历史保留。",
    ),
    "mem.event.correct_confirm": (
        "Write the correction? This event becomes history under the new one.",
        "提交更正？当前事件将作为新事件的历史保留。",
    ),
    "mem.event.new_title": ("Title", "标题"),
    "mem.event.new_summary": ("Summary", "摘要"),
    "mem.event.new_happened": (
        "Happened (optional ISO date or time)",
        "发生时间（可选，ISO 日期或时间）",
    ),
    "mem.event.receipt": ("Done", "已完成"),
    "mem.event.corrected": ("a user correction", "用户更正"),
    "mem.event.agent": ("recorded by the agent", "由智能体记录"),
    "mem.conflicts.title": ("Conflicts", "冲突"),
    "mem.conflicts.intro": (
        "Active events marked as contradicting each other: keep both, or say which replaces "
        "the other.",
        "被标记为相互矛盾的活跃事件：可以都保留，或指定哪一条取代另一条。",
    ),
    "mem.conflicts.none": ("No conflicts to resolve.", "没有待解决的冲突。"),
    "mem.conflicts.newer": ("Newer", "较新"),
    "mem.conflicts.older": ("Older", "较早"),
    "mem.conflicts.keep_both": ("Keep both", "都保留"),
    "mem.conflicts.supersedes": ("This one replaces the other", "以这一条取代另一条"),
    "mem.conflicts.supersede_confirm": (
        "Make this event replace the other? The other is kept as its history.",
        "以这一条取代另一条？另一条将作为历史保留。",
    ),
    "mem.conflicts.sources": ("Sources", "来源"),
}


# Stored values shown on the pages (``t.value(prefix, raw)``): English is the value itself.
_VALUES = {
    "mem.value.precision": {
        "instant": "精确时刻",
        "day": "日",
        "month": "月",
        "year": "年",
        "range": "时间段",
        "unknown": "未知",
    },
    "mem.value.basis": {
        "explicit": "明确",
        "relative": "相对",
        "inferred": "推断",
        "unknown": "未知",
    },
    "mem.value.temporal": {
        "occurred": "已发生",
        "planned": "计划中",
        "cancelled": "已取消",
        "ongoing": "进行中",
        "unknown": "未知",
    },
    "mem.value.criticality": {
        "routine": "日常",
        "preference": "偏好",
        "identity": "身份",
        "safety": "安全",
    },
    "mem.value.scope": {"user": "用户", "project": "项目", "global": "全局"},
    "mem.import.category": {
        "instruction": "指示",
        "identity": "身份",
        "career": "职业",
        "project": "项目",
        "preference": "偏好",
    },
    "mem.import.source_system": {"unknown": "未知来源"},
}


def _values(lang: int) -> dict[str, str]:
    table = {}
    for prefix, labels in _VALUES.items():
        for raw, zh in labels.items():
            table[f"{prefix}.{raw}"] = zh if lang else raw
    return table


def _table(lang: int) -> dict[str, str]:
    table = {key: pair[lang] for key, pair in _TEXTS.items()} | _values(lang)
    for name, pair in _RELATIONS.items():
        table[f"mem.event.rel.{name}"] = pair[lang]
    for kind in EVENT_TYPES:
        table[f"mem.events.type.{kind}"] = _TYPES_ZH[kind] if lang else kind.replace("_", " ")
    return table


EVENT_STRINGS: dict[str, dict[str, str]] = {"en": _table(0), "zh": _table(1)}
