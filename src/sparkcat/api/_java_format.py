"""Java's textual forms of numbers, shared by ``values`` and the JSON converter.

Kafka prints doubles with ``Double.toString`` and floats with ``Float.toString`` (Jackson does the
same when it writes JSON numbers). Both give the shortest decimal that reads back to the same
value, like Python's ``repr``, but in a different layout: plain notation only for magnitudes in
``[1e-3, 1e7)`` and ``d.dddE±n`` otherwise (``1.0E7``, ``1.0E-4``). The digits follow JDK 19+
(shortest, closest); older JDKs occasionally printed a longer digit string.
"""

from __future__ import annotations

import math
import struct

_PACK_F = struct.Struct(">f")
FLOAT32_MAX = 3.4028234663852886e38


def to_float32(value: float) -> float:
    """Round a double to the nearest float32 (Java's ``(float) d``), overflowing to infinity."""
    try:
        return float(_PACK_F.unpack(_PACK_F.pack(value))[0])
    except OverflowError:
        # struct refuses finite values beyond FLT_MAX; Java rounds them to FLT_MAX or infinity.
        if abs(value) < 3.4028235677973366e38:
            return math.copysign(FLOAT32_MAX, value)
        return math.copysign(math.inf, value)


def _float32_digits(value: float) -> str:
    """The shortest decimal (``%g`` style) that rounds to the same float32 as ``value``."""
    target = to_float32(value)
    for precision in range(1, 10):
        text = f"{target:.{precision}g}"
        if to_float32(float(text)) == target:
            return text
    return repr(target)  # pragma: no cover - 9 significant digits always round-trip


def _layout(text: str) -> str:
    """Lay out a Python shortest repr (``repr`` / ``%g``) the way Java's toString does."""
    negative = text.startswith("-")
    if negative:
        text = text[1:]
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text) if exp_text else 0
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    # Position of the decimal point relative to the first significant digit.
    point = len(int_part) + exponent - (len(int_part + frac_part) - len(digits))
    digits = digits.rstrip("0") or "0"
    sign = "-" if negative else ""
    if -3 < point <= 7:
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


def java_double_str(value: float) -> str:
    """Java's ``Double.toString(value)``."""
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    magnitude = abs(value)
    if 1e-3 <= magnitude < 1e7:
        return repr(value)  # identical layout and digits in this range
    text = repr(value)
    if magnitude < 2.3e-308 and len(text.lstrip("-").split("e")[0].replace(".", "")) == 1:
        # Java never prints a single digit: subnormals then use the closest two-digit decimal.
        text = f"{value:.1e}"
    return _layout(text)


def java_float_str(value: float) -> str:
    """Java's ``Float.toString((float) value)``."""
    if value != value:
        return "NaN"
    value = to_float32(value)
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0.0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    return _layout(_float32_digits(value))
