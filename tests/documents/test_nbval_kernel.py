"""The repository's conftest makes nbval start a kernel again when a start fails (a port lost to
the other xdist worker's kernel), at most ``KERNEL_STARTS`` times, and fail as before after that."""
import pytest
from nbval import kernel as nbval_kernel
from nbval import plugin as nbval_plugin


@pytest.fixture
def conftest(pytestconfig):
    """The root conftest as pytest registered it (a plugin; importlib mode keeps it out of sys.modules)."""
    for plugin in pytestconfig.pluginmanager.get_plugins():
        if hasattr(plugin, "RestartingKernel"):
            return plugin
    raise AssertionError("the repository's conftest.py was not loaded")


class _Channels:
    def __init__(self):
        self.stopped = False

    def stop_channels(self):
        self.stopped = True


class _Manager:
    def __init__(self):
        self.shut_down = False

    def shutdown_kernel(self, now=False):
        self.shut_down = True


def _starts(monkeypatch, outcomes):
    """Replace nbval's kernel start with one that fails or succeeds in the order of ``outcomes``."""
    calls = []

    def start_new_kernel(**kwargs):
        calls.append(kwargs)
        if not outcomes[len(calls) - 1]:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return _Manager(), _Channels()

    monkeypatch.setattr(nbval_kernel, "start_new_kernel", start_new_kernel)
    monkeypatch.setattr(nbval_kernel.RunningKernel, "_ensure_iopub_up", lambda self: None)
    return calls


def test_nbval_uses_the_restarting_kernel(conftest):
    assert nbval_plugin.RunningKernel is conftest.RestartingKernel


def test_a_failed_start_is_tried_again_with_a_warning(monkeypatch):
    calls = _starts(monkeypatch, [False, True])
    with pytest.warns(RuntimeWarning, match="kernel start 1 of"):
        kernel = nbval_plugin.RunningKernel("python3", cwd=".", startup_timeout=5)
    assert len(calls) == 2
    assert isinstance(kernel.km, _Manager)


def test_a_kernel_that_keeps_dying_fails_after_the_last_start(monkeypatch, conftest):
    starts = conftest.KERNEL_STARTS
    calls = _starts(monkeypatch, [False] * starts)
    with pytest.warns(RuntimeWarning), pytest.raises(RuntimeError, match="Kernel died"):
        nbval_plugin.RunningKernel("python3", cwd=".", startup_timeout=5)
    assert len(calls) == starts


def test_a_kernel_whose_iopub_never_came_up_is_shut_down_before_the_next_start(monkeypatch):
    managers = []
    calls = _starts(monkeypatch, [True, True])

    def iopub(self):
        managers.append((self.km, self.kc))
        if len(managers) == 1:
            raise RuntimeError("Wasn't able to establish IOPub")

    monkeypatch.setattr(nbval_kernel.RunningKernel, "_ensure_iopub_up", iopub)
    with pytest.warns(RuntimeWarning):
        nbval_plugin.RunningKernel("python3", cwd=".", startup_timeout=5)
    first_manager, first_channels = managers[0]
    assert first_manager.shut_down and first_channels.stopped
    assert len(calls) == 2
