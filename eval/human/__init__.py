"""Human evaluation in the browser (SituRecBench App. C.2): a person plays the shopper.

``python -m eval.human serve --assistants heuristic,random`` serves the study; see
``eval.human.__main__``. Layers: ``protocol`` (tasks and plans), ``conversation`` (one
replayable episode with a human shopper), ``storage`` (files), ``study`` (participants),
``wording`` (what the participant reads), ``app`` (FastAPI), ``browser`` (Playwright driver for tests
and screenshots).
"""

__all__: list[str] = []
