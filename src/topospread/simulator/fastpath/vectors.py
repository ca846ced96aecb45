"""The array types the fast path's table, shapes and kernels share."""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]
Rows = npt.NDArray[np.intp]

MAX_INT32: Final = 2**31 - 1
