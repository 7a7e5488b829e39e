"""Nouns of a group one belongs to (a small closed list, English and Chinese): a name given
to one of them ("our choir, 'Northern Voices'", 我们的乐队叫“夜航”) is the group's."""

GROUPS = (
    r"(?:group|club|team|band|choir|chorus|church|society|collective|crew|league|circle|troupe"
    r"|organi[sz]ation|charity|association|orchestra)"
)
HAN_GROUPS = r"(?:团体|小组|乐队|合唱团|球队|俱乐部|社团|协会|组织|社群|教会|跑团|读书会)"
# the noun naming it: "our choir, 'X'", "a club called X", 我们的乐队叫X
GROUP_NAMED = rf"{GROUPS}\s*(?:,|\s+(?:is\s+)?(?:called|named))|{HAN_GROUPS}(?:叫做?|名叫|名字叫)"
