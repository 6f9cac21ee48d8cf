"""Studies: published comparisons re-run in one command, their figures printed beside ours.

One module per study; a new one is a module here and a line below. A benchmark study
(:class:`~vcsbench.studies.base.Study`) runs the benchmark suite with a fixed selection;
a load study (:class:`~vcsbench.studies.base.LoadStudy`) runs ``vcsbench load``.
"""

from vcsbench.studies import (
    distance,
    fsfs_format,
    ghe2015,
    git_fsync,
    git_storage,
    git_walks,
    markus2011,
    markus2013,
    markus_today,
    svn_storage,
)
from vcsbench.studies.base import LoadStudy, Study

STUDIES: dict[str, Study] = {
    study.name: study
    for study in (
        *(m.STUDY for m in (markus2013, git_fsync, markus_today, svn_storage, git_storage)),
        distance.STUDY,
        git_walks.COMMIT_GRAPH,
        git_walks.BITMAPS,
        fsfs_format.STUDY,
    )
}
LOAD_STUDIES: dict[str, LoadStudy] = {
    module.STUDY.name: module.STUDY for module in (markus2011, ghe2015)
}

__all__ = ["LOAD_STUDIES", "STUDIES", "LoadStudy", "Study"]
