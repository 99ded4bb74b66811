"""The integration tests' cluster fixtures (tests/integration/conftest.py), for the browser test."""
import importlib.util
import os

_path = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "integration", "conftest.py")
_spec = importlib.util.spec_from_file_location("drover_it_conftest", _path)
it = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(it)

make_cluster = it.make_cluster
