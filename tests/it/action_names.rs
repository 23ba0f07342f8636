//! The names of well-known operations, as a reviewed snapshot: renaming an action breaks every
//! agent prompt and client configuration that uses it, so a change here must be deliberate.

use aegis_gitea_mcp::catalog::Catalog;
use aegis_gitea_mcp::spec::Spec;

/// Operations an agent reaches for first, across every domain.
const WELL_KNOWN: [&str; 48] = [
    "repoGet",
    "repoSearch",
    "repoMigrate",
    "createFork",
    "repoListBranches",
    "repoDeleteBranch",
    "repoListTags",
    "repoCreateFile",
    "repoGetContents",
    "repoGetRawFile",
    "repoGetCombinedStatusByRef",
    "repoTransfer",
    "repoCreatePullRequest",
    "repoEditPullRequest",
    "repoMergePullRequest",
    "repoGetPullRequestByBaseHead",
    "repoDownloadPullDiffOrPatch",
    "repoListPullReviews",
    "repoCreatePullReviewRequests",
    "issueListIssues",
    "issueSearchIssues",
    "issueEditIssue",
    "issueCreateComment",
    "issueDeleteComment",
    "issueAddLabel",
    "issueCreateMilestone",
    "repoListReleases",
    "repoCreateRelease",
    "repoCreateReleaseAttachment",
    "repoGetWikiPage",
    "orgGetAll",
    "orgCreate",
    "orgListTeams",
    "orgAddTeamMember",
    "userGetCurrent",
    "userSearch",
    "userCurrentListRepos",
    "userCurrentPutStar",
    "userGetOauth2Application",
    "userGetOAuth2Application",
    "notifyGetList",
    "repoListHooks",
    "ActionsListRepositoryWorkflows",
    "getWorkflowRuns",
    "listPackages",
    "adminCreateUser",
    "getVersion",
    "renderMarkdown",
];

#[test]
#[cfg_attr(
    not(shared_spec),
    ignore = "needs the upstream swagger documents in ../shared/spec (or GITEA_SPEC_DIR)"
)]
fn well_known_action_names() {
    let bytes = crate::common::spec_bytes("gitea-swagger.v1.json");
    let spec = Spec::parse(&bytes).expect("gitea-swagger.v1.json parses");
    let catalog = Catalog::build(&spec).expect("gitea-swagger.v1.json builds a catalog");
    let lines: Vec<String> = WELL_KNOWN
        .iter()
        .map(|id| match catalog.get(id) {
            Some(a) => {
                assert_eq!(a.operation_id.as_str(), *id, "looked up by operationId");
                format!("{id} -> {}", a.name)
            }
            None => panic!("gitea-swagger.v1.json has no operation {id}"),
        })
        .collect();
    insta::assert_snapshot!("well_known_action_names", lines.join("\n"));
}
