"""Exceptions raised for a flashjit_status. Each carries `.status` (the C code) and the message
of flashjit_last_error(). Argument errors are also ValueErrors, as FlashInfer raises them."""

OK = 0
INVALID_ARGUMENT = 1
NOT_FOUND = 2
UNSUPPORTED = 3
COMPILE_ERROR = 4
CUDA_ERROR = 5
NO_DRIVER = 6
IO_ERROR = 7
CORRUPTION = 8
PERMISSION_DENIED = 9
INTERNAL = 10
INVALID_HANDLE = 11
BUFFER_TOO_SMALL = 12


class FlashJITError(RuntimeError):
    status = -1

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status


class InvalidArgumentError(FlashJITError, ValueError):
    status = INVALID_ARGUMENT


class NotFoundError(FlashJITError, LookupError):
    status = NOT_FOUND


class UnsupportedError(FlashJITError, NotImplementedError):
    status = UNSUPPORTED


class CompileError(FlashJITError):
    status = COMPILE_ERROR


class CudaError(FlashJITError):
    status = CUDA_ERROR


class NoDriverError(FlashJITError):
    status = NO_DRIVER


class IOError_(FlashJITError, OSError):
    status = IO_ERROR


class CorruptionError(FlashJITError):
    status = CORRUPTION


class PermissionDeniedError(FlashJITError, PermissionError):
    status = PERMISSION_DENIED


class InternalError(FlashJITError):
    status = INTERNAL


class InvalidHandleError(FlashJITError, ValueError):
    status = INVALID_HANDLE


class BufferTooSmallError(FlashJITError):
    status = BUFFER_TOO_SMALL


_BY_STATUS = {c.status: c for c in (
    InvalidArgumentError, NotFoundError, UnsupportedError, CompileError, CudaError,
    NoDriverError, IOError_, CorruptionError, PermissionDeniedError, InternalError,
    InvalidHandleError, BufferTooSmallError)}


def error_for(status, message):
    cls = _BY_STATUS.get(status, FlashJITError)
    return cls(message, status)
