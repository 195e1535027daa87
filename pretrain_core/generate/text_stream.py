"""Text of a growing token sequence, handed out piece by piece as it becomes final.

SentencePiece decodes a whole sequence better than token by token (word-boundary marks, byte-fallback pieces
that only together form a UTF-8 character), so each push decodes everything so far and returns what is new; a
trailing replacement character waits for the bytes that complete it.
"""

from __future__ import annotations

import sentencepiece as spm

INCOMPLETE = "\ufffd"


class TextStream:
    def __init__(self, tokenizer: spm.SentencePieceProcessor, prompt_ids: list[int] | None = None) -> None:
        """``prompt_ids``: the text continues a prompt (decoded together, a first word keeps its leading space)."""
        self.tokenizer = tokenizer
        self.ids: list[int] = list(prompt_ids or [])
        self.start = len(tokenizer.decode(self.ids))
        self.sent = self.start  # characters already handed out

    def push(self, token_id: int) -> str:
        """Add a token; return the text that is now final and was not returned before (may be empty)."""
        self.ids.append(token_id)
        text = self.tokenizer.decode(self.ids)
        if text.endswith(INCOMPLETE):
            return ""
        new, self.sent = text[self.sent :], len(text)
        return new

    def text(self) -> str:
        """Everything decoded after the prompt, an unfinished character included."""
        return str(self.tokenizer.decode(self.ids))[self.start :]
