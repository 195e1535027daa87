"""The data card of a corpus build: where its tokens came from, under which licences, and what each stage did."""
