"""The export formats of a gradebook, one registry: every list of them (``grader export
--format``'s choices and help, the batch's hint line, the service's export links and its
``?format=``) reads EXPORT_FORMATS, and export.py writes each LMS format with the writer of
grade_files.py its entry names.

Light on purpose (no gradebook, no CSV writers, no roster): the command line's grammar reads
it for every command, `grader check` of one file included.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExportFormat:
    """One grade file of a task, by the name ``--format`` and ``?format=`` give it."""

    name: str
    prefix: str  # its file: <prefix>-<task>.csv (grade_files.task_file)
    label: str  # the LMS, as help texts name it ("" for the detailed file)
    description: str  # one line
    # the grade_files function that writes an LMS's file, (path, rows matched with the roster,
    # assignment column, points possible, excel); "" for the detailed file, which every
    # export writes (write_detailed: its columns come from the reports)
    writer: str

    @property
    def pattern(self) -> str:
        return f"{self.prefix}-<task>.csv"


EXPORT_FORMATS: dict[str, ExportFormat] = {
    f.name: f
    for f in (
        ExportFormat(
            "csv", "grades", "", "the detailed grades: every check's points, the status, the diagnosis", ""
        ),
        ExportFormat(
            "canvas", "canvas", "Canvas", "Canvas's gradebook import, total points only", "write_canvas"
        ),
        ExportFormat(
            "moodle", "moodle", "Moodle", "Moodle's grade import, total points only", "write_moodle"
        ),
    )
}
DETAILED = EXPORT_FORMATS["csv"]
LMS_FORMATS = tuple(f for f in EXPORT_FORMATS.values() if f.writer)
