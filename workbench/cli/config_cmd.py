"""``workbench config``: lint reward configs, convert between formats, export into training TOMLs."""

from __future__ import annotations

import argparse

from workbench.cli.common import read_config
from workbench.cli.errors import UsageError
from workbench.core.lint import lint
from workbench.errors import TargetExistsError

FORMATS = """\
formats (detected from the file):
  .yaml / .yml   a workbench config: step_rewards keys at the top level (configs/*.yaml)
  .toml          a synth-ai training TOML, task-app style [rollout.env_config.step_rewards]
                 (or [rollout.policy_config.step_rewards], which wins when non-empty), or
                 trainer style step_rewards_* keys under [training]; or a standalone
                 [step_rewards] table as `convert` writes it
"""

GROUP_EPILOG = f"""\
examples:
  workbench config lint configs/*.yaml
  workbench config convert configs/recommended.yaml my_reward.toml
  workbench config export configs/recommended.yaml train.toml

{FORMATS}"""

LINT_EPILOG = f"""\
Reports what the task app would do with a config that its author may not expect: achievement
names it ignores (craft_wood_pickaxe, collect_food), strategy spellings it silently runs as
consistent, k_limits that cannot act in Crafter, indicator_lambda 0 meaning x1.0, shaping that
is switched off, ... One line per finding:

  FILE: LEVEL CODE KEY: MESSAGE (SUGGESTION)

or `FILE: ok`. Files are read strictly first: a syntax error, a wrong type or an unknown key
stops with exit status 2 before anything is linted.

examples:
  workbench config lint configs/upstream_shaped.yaml
  workbench config lint configs/*.yaml configs/examples/trainer_shaped.toml

exit status: 0 no error-level finding, 1 some error-level finding, 2 unreadable file.

{FORMATS}"""

CONVERT_EPILOG = f"""\
Reads IN in any supported format and writes OUT by its extension: .yaml/.yml a workbench
config, .toml a standalone [step_rewards] table (resource overrides included, in a table the
task app ignores). To put a config into an existing training TOML use `export` instead.
The write is atomic; an existing OUT is replaced only with --overwrite.

examples:
  workbench config convert configs/recommended.yaml recommended.toml
  workbench config convert train.toml extracted.yaml      # the step_rewards a training TOML runs

exit status: 0 written, 2 unreadable input or OUT exists (without --overwrite).

{FORMATS}"""

EXPORT_EPILOG = f"""\
Updates the step_rewards keys of an existing training TOML in place and keeps everything else
byte for byte: comments, layout and every other key. The table updated is the one the task app
reads: [rollout.policy_config.step_rewards] if present and non-empty, else
[rollout.env_config.step_rewards]; in trainer-style files the step_rewards_* keys under
[training]. A file with neither gets trainer-style keys if it has [training] and no [rollout];
otherwise add an empty [rollout.env_config.step_rewards] table to say where they go.
Resource overrides cannot be expressed in a training TOML and are not written.

examples:
  workbench config export configs/recommended.yaml train.toml
  cp configs/examples/task_app_complex.toml my_run.toml
  workbench config export my_reward.yaml my_run.toml

exit status: 0 written (or already up to date), 2 unreadable input or a file it cannot update.

{FORMATS}"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``workbench config`` and its lint, convert and export commands to ``subparsers``."""
    parser = subparsers.add_parser(
        "config",
        help="lint, convert and export reward configs (step_rewards tables)",
        description="Work with reward configs: the synth-ai task app's step_rewards tables.",
        epilog=GROUP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="config_command", metavar="COMMAND", required=True)

    lint_parser = _add(commands, "lint", "report what the task app would silently do with configs", LINT_EPILOG)
    lint_parser.add_argument("files", nargs="+", metavar="FILE", help="config files (.yaml, .yml, .toml)")
    lint_parser.set_defaults(func=run_lint)

    convert = _add(commands, "convert", "convert a config between YAML and TOML", CONVERT_EPILOG)
    convert.add_argument("source", metavar="IN", help="config to read (.yaml, .yml, .toml)")
    convert.add_argument("target", metavar="OUT", help="file to write (.yaml, .yml, .toml)")
    convert.add_argument("--overwrite", action="store_true", help="replace OUT if it exists")
    convert.set_defaults(func=run_convert)

    export = _add(commands, "export", "write a config's step_rewards into an existing training TOML", EXPORT_EPILOG)
    export.add_argument("config", metavar="CONFIG", help="config to export (.yaml, .yml, .toml)")
    export.add_argument("training_toml", metavar="TRAINING_TOML", help="training TOML to update in place")
    export.add_argument(
        "--force",
        action="store_true",
        help="replace a read-only TRAINING_TOML (it keeps its mode), or update one with other "
        "hard links in place (every link sees the change)",
    )
    export.set_defaults(func=run_export)


def _add(commands: argparse._SubParsersAction, name: str, summary: str, epilog: str) -> argparse.ArgumentParser:
    return commands.add_parser(
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + ".",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def run_lint(args: argparse.Namespace) -> int:
    """Lint each file; exit status 1 when any has an error-level finding, else 0."""
    configs = {path: read_config(path) for path in args.files}  # all readable before any output
    failed = False
    for path, config in configs.items():
        findings = lint(config)
        for finding in findings:
            print(f"{path}: {finding}")
        if not findings:
            print(f"{path}: ok")
        failed = failed or any(finding.level == "error" for finding in findings)
    return 1 if failed else 0


def run_convert(args: argparse.Namespace) -> int:
    """Write IN's config to OUT in OUT's format; exit status 0 (``UsageError`` when OUT exists)."""
    config = read_config(args.source)
    try:
        written = config.to_file(args.target, overwrite=args.overwrite)
    except TargetExistsError:
        raise UsageError(f"{args.target}: already exists; pass --overwrite to replace it") from None
    print(f"wrote {written}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Export a config's step_rewards into a training TOML in place; exit status 0."""
    from workbench.core.config_io import export_table  # tomlkit: only when exporting

    config = read_config(args.config)
    result = export_table(
        config.to_task_app_dict(),
        args.training_toml,
        resource_overrides=bool(config.resource_overrides),
        force=args.force,
    )
    state = "updated" if result.changed else "already up to date:"
    print(f"{state} {result.path} ({result.location.describe()})")
    if result.dropped_resource_overrides:
        print("note: resource_weights overrides not written: the task app cannot express them")
    errors = sum(finding.level == "error" for finding in lint(config))
    if errors:
        print(f"note: {args.config} has {errors} lint error(s); see `workbench config lint {args.config}`")
    return 0
