"""The status page and its polled counts panel, through the real app."""

from pathlib import Path
from urllib.parse import quote

from overview_data import adopt, quiet, ready_event, sealed_block
from webapp import memory_of, web_app


async def test_an_empty_space_shows_zero_counts_and_polls_slowly(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        space = (await quiet(host)).default_space()
        page = await client.get("/memory/")
        assert page.status_code == 200
        assert "Memory status" in page.text and "0 memory adoptions" in page.text
        assert f'data-poll-url="/memory/status/panel?space={quote(space)}"' in page.text
        assert 'data-poll-interval="30000"' in page.text
        assert "Short-term summaries" in page.text and "Long-term extraction" in page.text


async def test_pending_work_polls_fast_until_it_is_done(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await sealed_block(host)
        panel = await client.get("/memory/status/panel")
        assert 'data-poll-interval="2500"' in panel.text
        assert "Working" in panel.text
        await memory_of(host).derivation.process_pending()
        panel = await client.get("/memory/status/panel")
        assert 'data-poll-interval="30000"' in panel.text
        assert "Up to date" in panel.text


async def test_the_panel_counts_blocks_events_messages_and_jobs(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await sealed_block(host)
        memory = memory_of(host)
        await memory.derivation.process_pending()
        space = (await quiet(host)).default_space()
        await memory.blocks.append_turn(
            space, "tuesday", user="The kiln is fixed.", assistant="Good."
        )
        counts = await memory.overview.space_counts(space)
        assert counts.blocks == {"ready": 1} and counts.messages == 6 and counts.open_turns == 1
        assert counts.jobs == {
            "block_summary": {"succeeded": 1},
            "event_extraction": {"succeeded": 1},
            "topic_projection": {"succeeded": 1},  # the extracted event, put in a chapter
            "graph_projection": {"succeeded": 1},  # and projected into the graph
        }
        events = sum(counts.events.values())
        assert events >= 1
        html = (await client.get("/memory/status/panel")).text
        assert '<p class="stat">1</p>' in html  # one block
        assert f'<p class="stat">{events}</p>' in html
        assert "<dd>6</dd>" in html and "<dd>1</dd>" in html


async def test_an_unchanged_poll_is_304_and_a_change_is_200(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await quiet(host)
        first = await client.get("/memory/status/panel")
        etag = first.headers["etag"]
        again = await client.get("/memory/status/panel", headers={"if-none-match": etag})
        assert again.status_code == 304 and again.text == ""
        await sealed_block(host)
        changed = await client.get("/memory/status/panel", headers={"if-none-match": etag})
        assert changed.status_code == 200 and changed.headers["etag"] != etag
        chinese = await client.get("/memory/status/panel?lang=zh", headers={"if-none-match": etag})
        assert chinese.status_code == 200  # another language is another page


async def test_the_adoption_counter_counts_receipts_that_adopted_an_event(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        memory, space, event = await ready_event(host)
        await adopt(memory, space, [event.id], "r-1")
        await adopt(memory, space, [event.id], "r-2")
        await adopt(memory, space, [], "r-empty")
        page = await client.get("/memory/")
        assert "2 memory adoptions" in page.text


async def test_another_space_is_counted_on_its_own(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await sealed_block(host)
        await memory_of(host).blocks.append_turn(
            "elsewhere", "t", user="Hello there.", assistant="Hi."
        )
        page = await client.get("/memory/?space=elsewhere")
        assert page.status_code == 200
        assert 'data-poll-interval="30000"' in page.text  # the other space's job is not here
        assert "/memory/status/panel?space=elsewhere" in page.text


async def test_the_chinese_status_page(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await quiet(host)
        page = await client.get("/memory/?lang=zh")
        assert "记忆状态" in page.text and "0 次记忆采用" in page.text and "短期压缩" in page.text
        assert "Memory status" not in page.text


async def test_a_space_name_is_escaped(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await quiet(host)
        page = await client.get("/memory/", params={"space": "<script>x</script>"})
        assert page.status_code == 404  # no such space, named on the error page
        assert "<script>x</script>" not in page.text
