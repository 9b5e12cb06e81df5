"""`grader serve`: a submission service a course runs itself.

Students sign in with a personal token (``grader serve-token``), upload a file or a notebook
for a task, and read their feedback page seconds later; staff see the class live, regrade,
and export the gradebook. The trust boundary moves to the network edge: every request,
upload, header and token is hostile. The service holds no student code in its own process:
it stores the upload's bytes (with their SHA-256) before it answers, queues them in the
database, and grades them as `grader batch` does, in pool processes with sandboxed workers.

Modules: ``schema`` (the tables), ``migrations/`` (Alembic), ``store`` (the database: people,
tokens, sessions, submissions and the queue), ``tokens`` (making, hashing, comparing),
``uploads`` (reading an upload as `grader check` reads a file), ``dispatcher`` (the thread that
grades: a fair queue, the pool, recovery after a crash), ``pages`` (HTML, rendered only),
``app`` (the ASGI routes: the API, the pages, sign-in, CSRF, security headers), ``limits``
(what one client may hold, by name), ``connections`` (below the app: connections per address
and in all, deadlines for a request's head and body).
"""
