"""Columns from the compiled part (python/src/columns.h) as pandas DataFrames."""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd


def column(value: Any) -> Any:
    """One column: a numpy array, a list, or a tagged tuple for the types
    numpy has no spelling for (nullable integers and bools, categoricals)."""
    if isinstance(value, tuple):
        tag = value[0]
        if tag == "nullable":
            return pd.arrays.IntegerArray(np.asarray(value[1], dtype=np.int64), np.asarray(value[2], dtype=bool))
        if tag == "nullable_bool":
            return pd.arrays.BooleanArray(np.asarray(value[1], dtype=bool), np.asarray(value[2], dtype=bool))
        if tag == "category":
            codes, categories = value[1], value[2]
            if len(set(categories)) == len(categories):
                return pd.Categorical.from_codes(codes, categories=categories)
            # Two broken names can decode to the same text: plain strings then.
            return np.asarray(categories, dtype=object)[codes] if len(codes) else np.array([], dtype=object)
        raise ValueError(f"unknown column tag {tag!r}")
    return value


def frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    """A DataFrame with the columns in the order they were made."""
    data = {name: column(value) for name, value in columns.items()}
    if not data:
        return pd.DataFrame()
    return pd.DataFrame(data, copy=False)
