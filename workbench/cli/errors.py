"""The command line's own error type.

It lives in its own module so command modules can import it while ``workbench.cli`` is still
initialising (it imports them)."""

from workbench.errors import WorkbenchError


class UsageError(WorkbenchError):
    """Bad usage or unreadable input: reported as one line, exit code 2."""
