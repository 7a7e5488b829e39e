"""Where the web app's templates and static files are: ``webui/`` beside the package in a
source checkout, ``stratagate_plugin/_webui`` inside an installed wheel."""

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[2]


def webui_dir() -> Path:
    for candidate in (_PACKAGE / "_webui", _PACKAGE.parent / "webui"):
        if (candidate / "templates").is_dir():
            return candidate
    raise FileNotFoundError("the web app's files (webui/) are missing from this installation")


def templates_dir() -> Path:
    return webui_dir() / "templates"


def static_dir() -> Path:
    return webui_dir() / "static"
