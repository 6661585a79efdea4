"""Exception types of irscale.

Every error a user can cause (a bad measure name, a missing table, an unreadable
file, a value that is not a value of the measure) is an :class:`IrscaleError`.
The command line prints such errors as one line and exits with status 2; any other
exception is a bug in irscale.
"""


class IrscaleError(Exception):
    """Base class of all errors caused by user input."""


class MeasureError(IrscaleError, ValueError):
    """A measure name or parameter is invalid (unknown name, parameter out of range)."""


class RecallBaseError(IrscaleError, ValueError):
    """The recall base is missing, superfluous or out of range for a measure."""


class ValueNotInScaleError(IrscaleError, ValueError):
    """A raw value is not (within tolerance) one of the measure's distinct values."""


class RunError(IrscaleError, ValueError):
    """A judged run has the wrong length, relevance degrees outside REL, or is infeasible."""


class TrecFormatError(IrscaleError, ValueError):
    """A qrels or run file cannot be read: missing, binary, empty, or a malformed line
    (the message names the file and the line)."""


class BuildTooLargeError(IrscaleError, MemoryError):
    """A build would need more memory or disk than is available (the message gives the
    estimate, what is available, and the way around)."""


class OracleListError(IrscaleError, ValueError):
    """A rank oracle was asked to list more distinct values than it lists (spacing statistics
    and figures read every value: build the measure's table for them)."""


class OutputError(IrscaleError):
    """An output file cannot be written (unknown format, missing folder, permission)."""


class IrscaleWarning(UserWarning):
    """Something in the input was handled by a documented convention that the user may
    not expect (a run without a ranking for a topic, topics not in the qrels)."""


class StoreError(IrscaleError):
    """A table file is missing, unreadable, foreign, incomplete or corrupt."""


class StoreBusyError(StoreError):
    """Another build is writing a table of the store (it holds the table's lock)."""


class CorruptStoreError(StoreError):
    """A stored table fails validation or its checksum (the message names the table)."""


class DiskFullError(StoreError):
    """The disk (or a file-size limit) ran out while writing; the message says where.
    Tables committed before stay intact and no temporary file is left."""


class TableNotFoundError(StoreError, KeyError):
    """The store does not hold the requested table."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class CertificationError(RuntimeError):
    """Floating point and high-precision arithmetic could not decide a tie.

    This is not a user error: it means the exactness guarantee of a table cannot be
    given, and the table is refused rather than written with possibly wrong ties.
    """


def warn(message: str, category: type[Warning] = IrscaleWarning) -> None:
    """Give a warning that points at the caller's line, the first frame outside irscale
    (not at the library line that gives it), as the warnings module's ``stacklevel``
    would with the right count from every call path."""
    import os
    import sys
    import warnings

    here = os.path.dirname(os.path.abspath(__file__))
    ours = (here + os.sep,)
    if not os.path.isdir(os.path.join(here, "scales")):          # a source checkout: the folders beside irscale/
        ours += tuple(os.path.join(os.path.dirname(here), d) + os.sep for d in ("enumerate", "scales", "store"))
    level, frame = 2, sys._getframe(1)         # stacklevel 2: the caller of this function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(ours):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
