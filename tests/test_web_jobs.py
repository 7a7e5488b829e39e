"""The jobs page: jobs by state, retrying one or every failed job of a space."""

from pathlib import Path

from overview_data import failed_jobs, quiet, sealed_block
from webapp import memory_of, post, web_app


async def test_failed_jobs_are_listed_with_their_error(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        block_id = await sealed_block(host)
        [job] = await failed_jobs(memory_of(host), "<script>alert(1)</script> endpoint down")
        page = await client.get("/memory/jobs?state=failed")
        assert page.status_code == 200
        assert job.id in page.text and block_id in page.text and "Block summary" in page.text
        assert "&lt;script&gt;alert(1)&lt;/script&gt; endpoint down" in page.text
        assert "<script>alert(1)" not in page.text
        assert f'action="/memory/jobs/{job.id}/retry?' in page.text
        assert "1 / 3" in page.text
        assert job.id not in (await client.get("/memory/jobs?state=running")).text


async def test_retrying_a_failed_job_runs_it_again(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await sealed_block(host)
        memory = memory_of(host)
        [job] = await failed_jobs(memory)
        answer = await post(client, f"/memory/jobs/{job.id}/retry?state=failed")
        assert answer.status_code == 303
        assert (
            "/memory/jobs?" in answer.headers["location"]
            and "retried=1" in answer.headers["location"]
        )
        await quiet(host)  # the retry asked the worker for a pass
        jobs = {j.kind: j for j in await memory.derivation.list_jobs()}
        assert jobs["block_summary"].status == "succeeded"
        assert jobs["event_extraction"].status == "succeeded"
        notice = await client.get(answer.headers["location"])
        assert "1 job(s) queued again" in notice.text


async def test_a_job_that_is_not_failed_is_refused_and_an_unknown_one_is_404(
    tmp_path: Path,
) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await sealed_block(host)
        [job] = await memory_of(host).derivation.list_jobs()
        refused = await post(client, f"/memory/jobs/{job.id}/retry")
        assert refused.status_code == 400
        assert "only failed jobs can be retried" in refused.text
        assert (await memory_of(host).derivation.list_jobs())[0].status == "pending"
        missing = await post(client, "/memory/jobs/job_nope/retry")
        assert missing.status_code == 404 and "job_nope" in missing.text


async def test_retry_failed_requeues_only_this_space(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await sealed_block(host)
        memory = memory_of(host)
        await memory.blocks.append_turn("elsewhere", "x", user="A fact elsewhere.", assistant="Ok.")
        await memory.blocks.seal_tail("elsewhere", "x")
        assert len(await failed_jobs(memory)) == 2
        answer = await post(client, "/memory/jobs/retry-failed")
        assert answer.status_code == 303 and "retried=1" in answer.headers["location"]
        await quiet(host)
        assert [j.status for j in await memory.derivation.list_jobs("elsewhere")] == ["failed"]
        space = (await quiet(host)).default_space()
        assert {j.status for j in await memory.derivation.list_jobs(space)} == {"succeeded"}


async def test_states_filter_and_bad_parameters(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await sealed_block(host)
        [job] = await memory_of(host).derivation.list_jobs()
        assert job.id in (await client.get("/memory/jobs?state=pending")).text
        assert job.id in (await client.get("/memory/jobs")).text
        assert job.id not in (await client.get("/memory/jobs?state=failed")).text
        assert "No jobs in this state." in (await client.get("/memory/jobs?state=failed")).text
        assert (await client.get("/memory/jobs?state=done")).status_code == 400
        assert (await client.get("/memory/jobs?offset=-1")).status_code == 400
        assert (await client.get("/memory/jobs?offset=abc")).status_code == 400
        assert job.id not in (await client.get("/memory/jobs?offset=50")).text


async def test_jobs_page_in_chinese(tmp_path: Path) -> None:
    async with web_app(tmp_path) as (_, host, client):
        await sealed_block(host)
        page = await client.get("/memory/jobs?lang=zh")
        assert "后台任务" in page.text and "记忆块摘要" in page.text and "等待中" in page.text
