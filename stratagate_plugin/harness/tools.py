"""Tools from typed functions: the signature is the schema, the docstring the description.

A parameter annotated ``ToolCallContext`` is filled in by the host and hidden from the model;
``Annotated[int, Field(ge=1, le=20, description=...)]`` and ``Literal[...]`` give ranges and
enums. Arguments are validated before the function runs.
"""

import inspect
import json
import re
from collections.abc import Callable
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from .chat import ToolCall
from .errors import HostError, describe
from .pm import await_me_maybe
from .types import Tool, ToolCallContext

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ToolArgumentsError(Exception):
    """The model sent arguments that are not JSON or do not fit the schema."""


def as_tool(item: Tool | Callable[..., Any], name: str | None = None) -> Tool:
    """``item`` itself if it is a ``Tool``, else a tool built from the function."""
    tool = item if isinstance(item, Tool) else tool_from_function(item, name)
    if not TOOL_NAME.match(tool.name):
        raise HostError(f"invalid tool name {tool.name!r}: use 1-64 letters, digits, _ or -")
    return tool


def tool_from_function(function: Callable[..., Any], name: str | None = None) -> Tool:
    """A ``Tool`` whose arguments are validated against ``function``'s typed signature."""
    tool_name = name or function.__name__
    arguments, context_name = _arguments_model(function, tool_name)

    async def implementation(values: dict[str, Any], call: ToolCallContext) -> Any:
        try:
            parsed = arguments.model_validate(values)
        except ValidationError as error:
            raise ToolArgumentsError(describe(error)) from error
        kwargs = {key: getattr(parsed, key) for key in type(parsed).model_fields}
        if context_name is not None:
            kwargs[context_name] = call
        return await await_me_maybe(function(**kwargs))

    description = inspect.getdoc(function) or tool_name
    return Tool(tool_name, description, _schema(arguments), implementation)


def _arguments_model(function: Callable[..., Any], name: str) -> tuple[type[BaseModel], str | None]:
    hints = get_type_hints(function, include_extras=True)
    fields: dict[str, Any] = {}
    context_name = None
    for parameter in inspect.signature(function).parameters.values():
        annotation = hints.get(parameter.name, Any)
        if annotation is ToolCallContext:
            context_name = parameter.name
            continue
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        fields[parameter.name] = (annotation, default)
    config = ConfigDict(extra="forbid")
    model: type[BaseModel] = create_model(f"{name}_arguments", __config__=config, **fields)
    return model, context_name


def _schema(arguments: type[BaseModel]) -> dict[str, Any]:
    schema = arguments.model_json_schema()
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
    return schema


def parse_arguments(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as a JSON object (empty text counts as ``{}``)."""
    try:
        values = json.loads(call.arguments or "{}")
    except json.JSONDecodeError as error:
        raise ToolArgumentsError(f"arguments are not valid JSON: {error}") from error
    except RecursionError:
        raise ToolArgumentsError("arguments are JSON nested too deeply to read") from None
    if not isinstance(values, dict):
        raise ToolArgumentsError("arguments must be a JSON object")
    return values


def result_text(result: Any) -> str:
    """A tool result as the text the model reads."""
    if isinstance(result, str):
        return result
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    return json.dumps(result, ensure_ascii=False, default=str)
