"""Plumbing every lifecycle step uses: the store, the catalog, checked graph writes, named queries, errors,
configuration (docs/architecture.md). A regular package, so that setuptools installs it and the import contract
(tests/test_import_contract.py) sees its modules."""
