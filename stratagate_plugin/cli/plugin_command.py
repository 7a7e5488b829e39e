"""``stratagate plugin --profile NAME add|remove|list``: which plugins a profile enables."""

import argparse
from typing import Any

from ..harness.errors import HostError
from ..harness.manifest import check_plugin, installed_plugins
from ..harness.profiles import DEFAULT_PROFILE, Profile, disable_plugin, enable_plugin, load_profile


def register(commands: Any) -> None:
    parser = commands.add_parser("plugin", help="enable, disable or list a profile's plugins")
    add_profile_option(parser, DEFAULT_PROFILE)
    actions = parser.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", help="enable an installed plugin (checks compatibility)")
    add.add_argument("plugin")
    remove = actions.add_parser("remove", help="disable a plugin (its settings are kept)")
    remove.add_argument("plugin")
    listing = actions.add_parser(
        "list", help="installed plugins and whether this profile enables them"
    )
    for action in (add, remove, listing):  # `plugin list --profile X` as well as before it
        add_profile_option(action, argparse.SUPPRESS)
    parser.set_defaults(handler=run_plugin)


def add_profile_option(parser: argparse.ArgumentParser, default: str) -> None:
    """``--profile`` on the group and on each action; an action's ``SUPPRESS`` default
    leaves the group's value alone when the option is given before the action."""
    parser.add_argument(
        "--profile", default=default, help=f"profile name (default: {DEFAULT_PROFILE})"
    )


async def run_plugin(args: argparse.Namespace) -> int:
    profile = load_profile(args.profile)
    if args.action == "add":
        manifest = check_plugin(args.plugin)
        added = enable_plugin(profile, args.plugin)
        state = "enabled" if added else "already enabled"
        print(f"{args.plugin} {manifest.version}: {state} in profile {profile.name}")
    elif args.action == "remove":
        disable_plugin(profile, args.plugin)
        print(f"{args.plugin}: disabled in profile {profile.name}")
    else:
        print_plugins(profile)
    return 0


def print_plugins(profile: Profile) -> None:
    installed = installed_plugins()
    for name in sorted(set(installed) | set(profile.plugins)):
        enabled = "enabled" if name in profile.plugins else "-"
        print(f"{name:<32} {_version(name, installed):<10} {enabled}")
    if not installed and not profile.plugins:
        print("(no plugins installed)")


def _version(name: str, installed: dict[str, Any]) -> str:
    if name not in installed:
        return "missing"
    try:
        return check_plugin(name).version
    except HostError:
        return "invalid"
