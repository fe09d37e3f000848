"""The command line's one error type, in its own module so command modules can import it
while ``workbench.cli`` is still initialising (it imports them)."""


class UsageError(Exception):
    """Bad usage or unreadable input: reported as one line, exit code 2."""
