"""One typed result per chapter: ``<module>.chapter(root) -> <Name>Result``.

Each module computes, from the stored runs and records under the book's folder ``root``
(:func:`resdecay_lib.book.notebooks.find_book_root`), every number, sentence, table and
figure's data its chapter shows, as one frozen dataclass whose ``glues()`` maps each glue name
to its value (:mod:`resdecay_lib.book.glues`). The sentences that depend on the evidence are
written by the module's wording functions (``*_words``), each a small function of the numbers
it reads. A chapter calls ``chapter(root)``, glues the result, draws its figures and asserts on
the result's fields; it defines nothing.
"""
