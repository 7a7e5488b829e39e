"""The host's own behaviour, registered as a default plugin like any other."""

from .hookspecs import hookimpl
from .types import ContextSection, HostAPI, Session, TurnState

SYSTEM_PROMPT = (
    "You are a helpful assistant running in the StrataGate reference harness. "
    "Use the tools you are given when they help, and answer the user directly."
)


@hookimpl
def build_context(
    host: HostAPI, session: Session, user_message: str, state: TurnState
) -> list[ContextSection]:
    """The base system prompt (the profile's ``system_prompt`` if set), first of all."""
    text = host.profile.system_prompt or SYSTEM_PROMPT
    return [ContextSection(id="host:system-prompt", text=text, order=0)]
