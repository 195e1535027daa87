"""Counting letters and words per script in one compiled pass over a text's code points (`langid.script_counts`,
read by language identification for every document and by the quality stage's dominant-script signal).

The caller gives a table from code point to script number (0: not a letter, then one number per listed script,
then one for letters of no listed script) and which script numbers are unsegmented; the kernel does what the
per-character loop it replaced did, and a test compares the two on real and random text.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def count_scripts(points, table, unsegmented):
    """Per script number: letters, words (a run of letters of one script is one word, each letter of an
    unsegmented script is one) and the position of its first letter (-1: none); and the totals of both."""
    size = unsegmented.size
    letters = np.zeros(size, dtype=np.int64)
    words = np.zeros(size, dtype=np.int64)
    first = np.full(size, -1, dtype=np.int64)
    total_letters = 0
    total_words = 0
    previous = np.int64(-1)
    for i in range(points.size):
        script = np.int64(table[points[i]])
        if script == 0:
            previous = np.int64(-1)
            continue
        total_letters += 1
        letters[script] += 1
        if first[script] < 0:
            first[script] = i
        if script == previous and not unsegmented[script]:
            continue
        previous = script
        total_words += 1
        words[script] += 1
    return letters, words, first, total_letters, total_words
