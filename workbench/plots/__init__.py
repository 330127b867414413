"""Figures: one function per figure kind, each taking data and returning the Axes.

Plots never compute what an analysis should return: they draw results.
Submodules group figures by topic; :func:`workbench.plots.style.new_axes` gives
every figure the same readable defaults.
"""
