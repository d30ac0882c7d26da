"""Python exceptions for hessfit's errors.

Every HessianForce method checks its arguments and raises a HessianForceException whose message
names the offending item and whose ``code`` says what went wrong (the numbers of the C++
HessianForceException::Code and of the C API's hessfit_status). The classes also derive from the
Python exception a caller would expect: IndexError for an index out of range, ValueError for a
bad value or array size. Errors of OpenMM itself are openmm.OpenMMException.
"""
import enum

import openmm


class ErrorCode(enum.IntEnum):
    """What went wrong (C++ HessianForceException::Code, C hessfit_status)."""
    NullArgument = 1
    Index = 2
    Value = 3
    Size = 4
    Topology = 5
    Geometry = 6
    NotInContext = 7
    Unsupported = 8
    Ownership = 9
    OpenMM = 10
    OutOfMemory = 11
    InvalidArgument = 12
    IO = 13
    Format = 14
    Parse = 15
    Truncated = 16
    Count = 17
    Overflow = 18
    Nonfinite = 19
    UnknownElement = 20
    Shape = 21
    Lapack = 22
    Nlopt = 23


class HessianForceException(openmm.OpenMMException):
    """An error of hessfit: ``str(e)`` is hessfit's message, ``e.code`` an ErrorCode."""

    def __init__(self, message, code):
        super().__init__(message)
        try:
            self.code = ErrorCode(code)
        except ValueError:
            self.code = code


class HessianForceIndexError(HessianForceException, IndexError):
    """A particle, slot, term or molecule index out of range."""


class HessianForceValueError(HessianForceException, ValueError):
    """A bad value (NaN, infinite, out of range) or an array of the wrong size or shape."""


_VALUE_CODES = {ErrorCode.NullArgument, ErrorCode.Value, ErrorCode.Size, ErrorCode.InvalidArgument,
                ErrorCode.Nonfinite, ErrorCode.Shape, ErrorCode.Count}


def make_error(code, message):
    """The exception for a code and message (called by the compiled module)."""
    if code == ErrorCode.Index:
        return HessianForceIndexError(message, code)
    if code in _VALUE_CODES:
        return HessianForceValueError(message, code)
    return HessianForceException(message, code)
