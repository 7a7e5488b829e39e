"""The export prompt (§11.2): what a user gives the *other* AI so that it writes down what it
remembers about them as ``stratagate.external-memory.v2`` JSON (§11.1).

The rules are the ones the importer relies on: one fact per candidate, nothing guessed
(least of all a time), nothing sensitive, contradictions kept apart so the decider can see
them, no ``null`` anywhere, and the fixed category order. The example is a complete,
valid document, so a model that copies its shape produces something the parser reads.
The Chinese prompt says the same in natural Chinese; the JSON keys and enum values stay
as they are, because the parser reads them.
"""

EXAMPLE_JSON = """{
  "schemaVersion": "stratagate.external-memory.v2",
  "sourceType": "external_ai_memory_export",
  "sourceSystem": "chatgpt",
  "candidates": [
    {
      "memoryKind": "instruction",
      "category": "instruction",
      "title": "Answers in British English",
      "summary": "The user asked for every answer to be written in British English.",
      "tags": ["instruction", "language"],
      "quotes": ["please always use British spelling"],
      "scope": "user",
      "criticality": "preference",
      "confidence": 0.95
    },
    {
      "memoryKind": "event",
      "category": "project",
      "title": "Billing service moved to Rust",
      "summary": "The user's team finished moving the billing service from Python to Rust.",
      "tags": ["project", "billing"],
      "temporal": {
        "mentionedAt": "2025-03-14T10:00:00+00:00",
        "happenedStart": "2025-03-10",
        "originalText": "we finished the Rust migration on Monday",
        "precision": "day",
        "basis": "explicit",
        "status": "occurred",
        "eventType": "migration"
      },
      "scope": "project",
      "criticality": "routine",
      "confidence": 0.9
    }
  ],
  "coverage": "partial",
  "coverageNote": "Only what I remember from saved memories; older chats are not included."
}"""

EXPORT_PROMPT_EN = f"""Please export everything you remember about me as one JSON document, \
so I can move it to another memory system. Reply with the JSON only, inside one ```json code block.

Rules:
1. Only what you actually remember from our conversations or your saved memory. No guesses, \
no inferences about me, nothing you would need to speculate about.
2. Leave out sensitive data: ID or account numbers, phone numbers, email addresses, \
passwords, API keys, tokens and exact home or work addresses.
3. One fact per candidate. Split a memory that says two things into two candidates.
4. When two memories contradict each other (an old preference and a new one), output both \
as separate candidates; do not merge or resolve them.
5. Never guess a time. Give a date only when you know it. For relative time without a \
reliable anchor ("last week"), keep the words in temporal.originalText, set precision and \
basis to "unknown", and leave out happenedStart and happenedEnd.
6. Never write null. Leave out any field you have nothing for.
7. Order the candidates by category: instruction, identity, career, project, preference.

Fields of each candidate:
- memoryKind: "instruction" | "preference" | "fact" | "event"
- category: "instruction" | "identity" | "career" | "project" | "preference"; tags must \
include it
- title: a short name for the memory (at most 160 characters)
- summary: the memory itself, one independent, objective statement (at most 2,000 characters)
- narrative: only if the summary cannot hold the needed context
- tags: up to 12 short keywords
- quotes: only my own words that you can quote exactly (up to 12)
- temporal (only for what has a time): mentionedAt, happenedStart, happenedEnd (ISO-8601), \
originalText, precision ("instant" | "day" | "month" | "year" | "range" | "unknown"), basis \
("explicit" | "relative" | "inferred" | "unknown"), status ("occurred" | "planned" | \
"cancelled" | "ongoing" | "unknown"), participants (names), eventType (events only)
- scope: "user" | "project" | "session"
- criticality: "routine" | "preference" | "identity" | "safety"
- confidence: a number from 0 to 1, how sure you are that the memory is right

Top level: schemaVersion "stratagate.external-memory.v2", sourceType \
"external_ai_memory_export", sourceSystem (your product's name, or "unknown"), exportedAt \
(only if you know the current time reliably), candidates, coverage ("full" | "partial" | \
"limited": how much of what you remember is included), coverageNote (what is missing and \
why), uncertainItems (things you were unsure about and left out, described briefly).

Example of the exact shape:
```json
{EXAMPLE_JSON}
```"""

EXPORT_PROMPT_ZH = f"""请把你记得的关于我的所有信息导出为一份 JSON 文档，\
我要把它迁移到另一个记忆系统。\
只回复 JSON，并放在一个 ```json 代码块里。

规则：
1. 只写你确实从我们的对话或你保存的记忆中记得的内容。不要猜测，不要推断我是什么样的人，\
任何需要揣测的内容都不要写。
2. 不要包含敏感信息：证件号、账号、电话号码、电子邮箱、密码、API 密钥、令牌，\
以及精确的住址或公司地址。
3. 每条候选只写一个事实。一条记忆若说了两件事，就拆成两条。
4. 如果两条记忆互相矛盾（比如以前的偏好和现在的偏好），请分别输出为两条，\
不要合并，也不要替我判断哪条对。
5. 绝不猜测时间。只有确实知道日期时才写日期。没有可靠参照的相对时间（如“上周”），\
把原话保留在 temporal.originalText 里，precision 和 basis 都写 "unknown"，\
不要写 happenedStart 和 happenedEnd。
6. 任何地方都不要写 null。没有内容的字段直接省略。
7. 候选按类别排序：instruction（指令）、identity（身份）、career（职业）、\
project（项目）、preference（偏好）。

每条候选的字段（键名和取值请保持英文原样）：
- memoryKind："instruction" | "preference" | "fact" | "event"
- category："instruction" | "identity" | "career" | "project" | "preference"；tags 里必须包含它
- title：这条记忆的简短标题（不超过 160 个字符）
- summary：记忆本身，一句独立、客观的陈述（不超过 2000 个字符）
- narrative：仅当 summary 容纳不下必要的背景时才写
- tags：最多 12 个简短关键词
- quotes：只写你能逐字引用的我的原话（最多 12 条）
- temporal（仅用于有时间的内容）：mentionedAt、happenedStart、happenedEnd（ISO-8601），\
originalText，precision（"instant" | "day" | "month" | "year" | "range" | "unknown"），\
basis（"explicit" | "relative" | "inferred" | "unknown"），status（"occurred" | "planned" | \
"cancelled" | "ongoing" | "unknown"），participants（人名），eventType（仅用于事件）
- scope："user" | "project" | "session"
- criticality："routine" | "preference" | "identity" | "safety"
- confidence：0 到 1 之间的数字，表示你对这条记忆正确的把握

顶层字段：schemaVersion 写 "stratagate.external-memory.v2"，sourceType 写 \
"external_ai_memory_export"，sourceSystem 写你的产品名称（不知道就写 "unknown"），\
exportedAt（仅当你可靠地知道当前时间），candidates，coverage（"full" | "partial" | "limited"：\
导出的内容占你所记得内容的多少），coverageNote（缺了什么、为什么），uncertainItems（你拿不准而没有写入的内容，简要说明）。

格式示例：
```json
{EXAMPLE_JSON}
```"""
