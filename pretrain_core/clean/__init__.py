"""Cleaning: text repair, language identification, and Gopher/C4/code heuristics that drop documents."""
