# Convenience wrappers; the README's commands are the reference.
.PHONY: run test docs lint
run:
	python3 dev.py run
test:
	python3 dev.py test
docs:
	python3 dev.py docs
lint:
	.venv/bin/ruff check daskfair tests examples benchmarks cluster docs
