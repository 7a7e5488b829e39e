"""LoCoMo bench input: a shared image's caption joins its line as the host records images."""

from stratagate_plugin.bench.locomo import sessions_of

CONVERSATION = {
    "speaker_a": "Ann",
    "speaker_b": "Bo",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "Look!", "blip_caption": "a photo of a kiln"},
        {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice"},
    ],
}


def test_sessions_of_records_captions_unless_told_not_to() -> None:
    plain = [line.content for line in sessions_of(CONVERSATION, captions=False)[0].lines]
    shown = [line.content for line in sessions_of(CONVERSATION)[0].lines]
    assert plain == ["Ann: Look!", "Bo: Nice"]
    assert shown == ["Ann: Look! [image: a photo of a kiln]", "Bo: Nice"]
