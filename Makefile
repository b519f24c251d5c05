# Convenience wrappers; the README's commands are the reference.
.PHONY: run test lint
run:
	python3 dev.py run
test:
	python3 dev.py test
lint:
	.venv/bin/ruff check daskfair tests examples benchmarks cluster
