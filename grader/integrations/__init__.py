"""The platforms a course grades on: Gradescope (building the autograder zip, finishing
its results.json), GitHub and course CI (``grader ci``), and the running grader as a package to
ship (self_package.py). May import every part below it, classroom/ included; only the CLI is
above it.
"""
