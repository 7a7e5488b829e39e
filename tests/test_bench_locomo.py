"""LoCoMo bench input: a shared image's caption joins its line only when asked."""

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


def test_sessions_of_adds_captions_only_when_asked() -> None:
    plain = [line.content for line in sessions_of(CONVERSATION)[0].lines]
    shown = [line.content for line in sessions_of(CONVERSATION, captions=True)[0].lines]
    assert plain == ["Ann: Look!", "Bo: Nice"]
    assert shown == ["Ann: Look! [a photo of a kiln]", "Bo: Nice"]
