"""Benchmark cases, one module per family: each exposes ``cases(**params) -> list[Case]``.

``chronojoin bench`` discovers the modules of this package by name and calls ``cases``
with those of ``sizes``, ``quick``, ``data_dir``, ``seed``, ``orders``, ``buckets``,
``variants``, ``time_type`` and ``timeout_s`` that it accepts. A module may also expose
``generate(spark, **params) -> {table: DataFrame}``, used by ``chronojoin generate --kind``.
Reports read ``Case.params``: put the dataset size in ``n_ids`` (or ``size``/``rows``),
the study in ``variant``, and ``order``/``buckets`` where they apply.
"""
