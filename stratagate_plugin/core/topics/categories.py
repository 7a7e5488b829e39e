"""The directory's browse categories (spec §5.5), by an event's criticality and type.

Any non-routine criticality is a preference; otherwise the event type decides. A topic's
category is the majority of its events' (ties in the fixed order below).
"""

from collections import Counter
from collections.abc import Iterable

CATEGORIES = ("preferences", "decisions", "work", "relationships", "other")
CATEGORY_LABELS = {
    "preferences": "Preferences and requirements",
    "decisions": "Decisions and plans",
    "work": "Work and results",
    "relationships": "Communication and collaboration",
    "other": "Other experiences",
}
CATEGORY_LABELS_ZH = {
    "preferences": "偏好与要求",
    "decisions": "决定与计划",
    "work": "工作与结果",
    "relationships": "交流与协作",
    "other": "其他经历",
}
TYPE_CATEGORY = {
    "decision": "decisions",
    "plan": "decisions",
    "change": "decisions",
    "cancellation": "decisions",
    "release": "work",
    "task_completed": "work",
    "migration": "work",
    "incident": "work",
    "meeting": "relationships",
    "collaboration": "relationships",
}
PREFERENCE = "preferences"
OTHER = "other"


def event_category(criticality: str, event_type: str | None) -> str:
    if criticality != "routine":
        return PREFERENCE
    return TYPE_CATEGORY.get(event_type or "", OTHER)


def majority_category(categories: Iterable[str]) -> str:
    counts = Counter(categories)
    if not counts:
        return OTHER
    return max(CATEGORIES, key=lambda name: (counts[name], -CATEGORIES.index(name)))
