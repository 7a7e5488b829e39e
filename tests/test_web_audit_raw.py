"""The usage audit (receipts, 100 per page) and the raw data view (JSON of one item)."""

from pathlib import Path

from overview_data import adopt, quiet, ready_event, sealed_block
from webapp import web_app

SECRET = "api_key=abcdefgh12345678"


async def test_receipts_are_listed_with_links_to_their_events(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space, event = await ready_event(host)
        await adopt(memory, space, [event.id], "dsh:s1:tool:call-1")
        await adopt(memory, space, [], "dsh:s1:tool:call-2")
        page = await client.get("/memory/audit")
        assert page.status_code == 200
        assert f'href="/memory/events/{event.id}?space=' in page.text
        assert event.title in page.text and "memory_search_events" in page.text
        assert "dsh:s1:tool:call-1" in page.text and "none adopted" in page.text
        assert page.text.index("call-2") < page.text.index("call-1")  # newest first
        assert "audit-dsh:s1:tool:call-1" in page.text  # the conversation of the receipt


async def test_the_audit_pages_by_100(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        runtime = await quiet(host)
        space = runtime.default_space()
        for number in range(103):
            await adopt(runtime.memory, space, [], f"r-{number:03d}")
        first = await client.get("/memory/audit")
        assert first.text.count('<tr class="receipt">') == 100
        assert "r-102" in first.text and "r-002" not in first.text
        assert 'rel="next"' in first.text and 'rel="prev"' not in first.text
        second = await client.get("/memory/audit?offset=100")
        assert second.text.count('<tr class="receipt">') == 3
        assert (
            "r-000" in second.text
            and 'rel="prev"' in second.text
            and 'rel="next"' not in second.text
        )
        assert (await client.get("/memory/audit?offset=x")).status_code == 400


async def test_the_audit_in_chinese_and_empty(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await quiet(host)
        page = await client.get("/memory/audit?lang=zh")
        assert "使用记录" in page.text and "这个空间还没有使用记录。" in page.text


async def test_raw_event_block_and_receipt(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space, event = await ready_event(host)
        await adopt(memory, space, [event.id], "r-1")
        page = await client.get(f"/memory/raw?kind=event&id={event.id}")
        assert page.status_code == 200 and "&#34;card&#34;" in page.text and event.id in page.text
        data = (await client.get(f"/memory/raw.json?kind=event&id={event.id}")).json()
        assert data["card"]["id"] == event.id and data["adoptions"][0]["receipt_id"] == "r-1"
        block = await client.get(f"/memory/raw.json?kind=block&id={event.source_block_id}")
        assert block.headers["content-type"] == "application/json"
        assert block.json()["view"]["block"]["id"] == event.source_block_id
        receipt = (await client.get("/memory/raw.json?kind=receipt&id=r-1")).json()
        assert (
            receipt["event_ids"] == [event.id]
            and receipt["batch"]["tool"] == "memory_search_events"
        )


async def test_raw_unknown_ids_are_404_and_bad_kinds_400(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await quiet(host)
        for kind in ("event", "block", "receipt"):
            assert (await client.get(f"/memory/raw?kind={kind}&id=nope")).status_code == 404
            missing = await client.get(f"/memory/raw.json?kind={kind}&id=nope")
            assert missing.status_code == 404 and "nope" in missing.json()["error"]
        assert (await client.get("/memory/raw?kind=graph&id=x")).status_code == 400
        bad = await client.get("/memory/raw.json?kind=graph&id=x")
        assert bad.status_code == 400 and bad.headers["content-type"] == "application/json"
        assert (await client.get("/memory/raw.json?kind=event")).status_code == 400
        form = await client.get("/memory/raw")
        assert form.status_code == 200 and 'name="id"' in form.text


async def test_raw_redacts_secrets_and_escapes_markup(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        turns = [(f"My config says {SECRET} <script>alert(1)</script>", "Noted.")]
        block_id = await sealed_block(host, "secret", turns)
        page = await client.get(f"/memory/raw?kind=block&id={block_id}")
        assert "[redacted secret]" in page.text and "abcdefgh12345678" not in page.text
        assert "<script>alert(1)</script>" not in page.text and "&lt;script&gt;" in page.text
        data = await client.get(f"/memory/raw.json?kind=block&id={block_id}")
        assert "abcdefgh12345678" not in data.text and "[redacted secret]" in data.text


async def test_raw_in_chinese(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await quiet(host)
        page = await client.get("/memory/raw?lang=zh")
        assert "原始数据" in page.text and "使用回执" in page.text
