"""Native bf16 is read from the CPU's flags, so a bf16 run on a CPU that emulates it is warned about."""

from __future__ import annotations

from pretrain_core.train.observe.hardware import cpu_flags_have_bf16

SAPPHIRE_RAPIDS = "processor\t: 0\nflags\t\t: fpu vme sse avx2 avx512f avx512_bf16 amx_bf16 amx_tile\n"
SKYLAKE = "processor\t: 0\nflags\t\t: fpu vme sse avx2 avx512f avx512bw avx512vl\n"


def test_bf16_instructions_are_found_in_the_flags() -> None:
    assert cpu_flags_have_bf16(SAPPHIRE_RAPIDS)
    assert not cpu_flags_have_bf16(SKYLAKE)
    assert not cpu_flags_have_bf16("")  # nothing to read: no claim of support
