# nodeaudit learn: this directory is put first on PYTHONPATH for the user's training command, so
# Python imports this file at start-up in every process of the job (each rank, each DataLoader
# worker started by spawn). It runs the sitecustomize that was there before (if any), then lets
# nodeaudit_learn watch for `import torch`. Nothing is done when NODEAUDIT_LEARN_DIR is unset.
import importlib.machinery
import importlib.util
import os
import sys


def _chain_to_the_next_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    others = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


_chain_to_the_next_sitecustomize()
if os.environ.get("NODEAUDIT_LEARN_DIR"):
    import nodeaudit_learn

    nodeaudit_learn.install()
