"""The names of the quality signals: the columns of the quality schema's `quality_signals` struct.

Kept apart from their definitions (`signals.py`, which needs numpy and the clean stage's kernels) so the schema, the
contract every stage and the trainer import, loads none of that. `signals.py` refuses to load if its signals and
these names ever disagree.
"""

from __future__ import annotations

PROSE_SIGNAL_NAMES = (
    "log_words",
    "mean_word_length",
    "unique_word_share",
    "symbol_word_ratio",
    "alpha_token_share",
    "bullet_line_share",
    "ellipsis_line_share",
    "terminal_line_share",
    "short_line_share",
    "digit_line_share",
    "boilerplate_line_share",
    "url_token_share",
    "lorem_word_share",
    "duplicate_line_char_share",
    "duplicate_paragraph_char_share",
    "top_2gram_char_share",
    "top_3gram_char_share",
    "top_4gram_char_share",
    "repeated_5gram_char_share",
    "repeated_8gram_char_share",
    "digit_char_share",
    "upper_letter_share",
    "mojibake_per_100_letters",
    "replacement_char_share",
    "dominant_script_share",
    "function_word_share",
)
CODE_SIGNAL_NAMES = (
    "log_chars",
    "log_mean_line_length",
    "log_max_line_length",
    "long_line_share",
    "alnum_share",
    "space_share",
    "blank_line_share",
    "indented_line_share",
    "comment_line_share",
    "mean_identifier_length",
    "short_identifier_share",
    "digit_identifier_share",
    "unique_identifier_share",
    "hex_literal_share",
    "encoded_token_chars",
    "digit_char_share",
    "duplicate_line_share",
)
# Measured by the quality stage's reference models rather than on the text alone: how far the document's log10
# lexical and skeleton perplexities lie from reference text's own, in robust standard deviations, and the share of
# its tokens the skeleton keeps as themselves (stage.py).
PERPLEXITY_SIGNAL_NAMES = ("lexical_perplexity_z", "skeleton_perplexity_z", "skeleton_word_share")
GROUP_SIGNAL_NAMES = {
    "prose": PROSE_SIGNAL_NAMES + PERPLEXITY_SIGNAL_NAMES,
    "code": CODE_SIGNAL_NAMES + PERPLEXITY_SIGNAL_NAMES,
}
SIGNAL_FIELDS = tuple(dict.fromkeys(name for names in GROUP_SIGNAL_NAMES.values() for name in names))
