"""The fork manifests of review-dialects.md §12, as data: rs-tve@d1022f4 in full (§12.1) and the others as its
differences (§12.2), each cut down on request to the names that are paired in a given corpus listing."""

from __future__ import annotations

from typing import Any

from bceval.corpus.layers import Listing, discover_leaves, paired_articles

UPGRADE_CONTEXT = "The extended table existed in the previous app version and already contains rows."
FINANCE_CONTEXT = (
    "Target Business Central 28, worldwide standard application (w1). Review each file as an independent source input."
)

# §12.1, rs-tve/BCQuality@d1022f4: domain -> (member, names)
RS_TVE: dict[str, tuple[str, list[str]]] = {
    "agents": ("article", ["wire-all-three-agent-interfaces"]),
    "breaking-changes": ("article", ["do-not-expose-sensitive-data-through-public-api"]),
    "data-modeling": (
        "articles",
        [
            "activate-new-price-calculation-handler-via-onfindsupportedsetup",
            "check-blocked-in-referencing-code-not-in-master",
            "code-must-not-change-workdate",
            "custom-document-dispatch-must-not-bypass-report-selections",
            "delete-master-data-with-trigger",
            "document-line-prices-follow-prices-including-vat",
            "document-print-and-email-actions-call-report-selections-directly",
            "extend-find-entries-navigate-for-new-document-types",
            "extend-price-source-type-must-sync-document-subset-enum",
            "extend-report-selection-usage-for-new-document-types",
            "master-data-must-be-inserted-with-trigger",
            "new-price-source-must-add-candidate-and-trigger-recalculation",
            "pictures-must-use-media-not-blob",
            "report-barcodes-must-use-barcode-module-and-production-font-name",
            "table-design-must-match-bc-table-type-conventions",
            "transferfields-mirrored-fields-must-match-type-and-length",
        ],
    ),
    "error-handling": (
        "articles",
        [
            "collect-validation-errors-with-errorbehavior",
            "declined-confirm-must-abort-not-partially-apply",
            "defensive-vs-offensive-code-must-match-blast-radius",
            "log-writes-must-survive-rollback",
        ],
    ),
    "events": (
        "articles",
        [
            "reset-ishandled-only-when-the-value-can-carry-over",
            "changecompany-runs-triggers-in-the-calling-company",
            "database-trigger-setup-flags-may-only-be-set-to-true",
        ],
    ),
    "finance": (
        "articles",
        [
            "apply-ledger-entries-through-application-codeunits",
            "change-ledger-due-dates-through-entry-edit",
            "do-not-edit-shared-dimension-sets",
            "do-not-modify-or-delete-posted-ledger-entries",
            "normal-vat-journal-amount-includes-vat",
            "post-ledger-entries-through-posting-codeunits",
            "preserve-journal-batch-document-balance",
            "reverse-transactions-by-transaction-number",
            "write-dimensions-as-dimension-set-entries",
        ],
    ),
    "interfaces": ("article", ["set-defaultimplementation-on-enum"]),
    "performance": (
        "articles",
        [
            "use-isempty-for-existence-check",
            "use-get-instead-of-findfirst-on-full-primary-key",
            "job-queue-category-code-serializes-conflicting-jobs",
            "job-queue-external-effects-must-be-idempotent",
            "job-queue-handlers-must-not-require-ui",
            "job-queue-handlers-must-propagate-failures",
            "job-queue-on-hold-does-not-stop-running-work",
            "store-scheduled-task-id-to-avoid-duplicate-tasks",
            "design-covering-keys-from-read-pattern",
            "review-overlapping-keys-before-adding-an-index",
            "setcurrentkey-sets-sort-order-not-index-hint",
            "preserve-buffered-inserts-by-separating-target-reads",
            "aggregate-before-persisting-intermediate-results",
            "cache-repeated-filtered-results-with-explicit-scope",
            "avoid-repeating-unchanged-validation",
            "avoid-get-inside-loop-on-large-table",
            "isempty-before-findset-is-extra-round-trip",
            "query-results-bypass-primary-key-cache",
            "calcsums-instead-of-calcfields-in-loop",
            "use-setautocalcfields-for-per-row-flowfields",
            "temporary-tables-have-no-database-cost",
            "use-setloadfields-for-partial-records",
            "prefer-modifyall-over-per-row-modify",
            "al-methods-limited-during-write-transactions",
            "avoid-user-prompts-inside-transactions",
            "use-grouped-query-for-distinct-values-and-duplicates",
        ],
    ),
    "privacy": (
        "articles",
        [
            "no-pii-in-telemetry-message-string",
            "register-owned-log-tables-for-retention-policies",
            "ship-a-default-retention-policy-setup",
        ],
    ),
    "query": (
        "articles",
        [
            "dataitemtablefilter-cannot-be-overwritten-at-runtime",
            "reopening-query-resets-cursor-but-keeps-filters",
            "set-query-filters-before-open",
            "setfilter-overwrites-query-columnfilter",
        ],
    ),
    "reporting": (
        "articles",
        [
            "clear-report-variable-before-independent-runmodal",
            "currreport-break-ends-the-current-trigger",
            "currreport-quit-rolls-back-and-skips-onpostreport",
            "currreport-skip-does-not-stop-trigger-code",
            "report-output-in-a-loop-needs-one-client-download",
            "reportextension-dataitem-trigger-order-is-explicit",
            "reportextension-report-triggers-run-after-base-triggers",
            "settableview-cannot-broaden-dataitemtableview",
            "stop-when-runrequestpage-returns-empty-parameters",
        ],
    ),
    "scm": (
        "articles",
        [
            "post-item-ledger-changes-through-item-journals",
            "post-revaluation-through-the-item-journal-batch",
            "change-item-applications-through-posting-routines",
            "cancel-reservations-through-reservation-management",
            "transfer-item-tracking-through-source-reservation-codeunits",
            "reconcile-warehouse-adjustments-with-the-item-ledger",
            "post-transfers-through-shipment-and-receipt-codeunits",
            "use-date-aware-availability-for-promising",
            "carry-out-requisition-actions-through-the-standard-workflow",
            "derive-base-quantities-through-the-line-unit-of-measure",
        ],
    ),
    "security": (
        "articles",
        [
            "al-has-no-built-in-htmlencode",
            "do-not-concatenate-external-text-into-setfilter",
            "exposed-objects-must-be-in-a-permission-set",
        ],
    ),
    "style": (
        "articles",
        [
            "label-comment-explains-placeholders",
            "dateformula-evaluate-needs-language-independent-literals",
            "al-comments-must-not-restate-what-code-already-shows",
            "pages-must-not-contain-business-logic",
            "mutating-procedure-for-a-page-caller-takes-var-record",
        ],
    ),
    "telemetry": ("article", ["telemetry-event-id-stable-unique"]),
    "testing": (
        "articles",
        [
            "ui-handlers-in-tests",
            "reset-per-test-state-before-the-isinitialized-guard",
            "asserterror-needs-expectederror-and-code",
            "bcpt-scenarios-must-be-app-specific",
            "commit-shared-test-fixture-inside-lazy-initialize",
            "given-blocks-must-cover-full-precondition-chain",
            "table-relation-test-exclude-known-invalid-relations-via-event",
            "test-feature-scenario-tags",
            "test-one-when-per-test",
            "transactionmodel-attribute-governs-test-transactions",
            "ui-test-codeunit-naming",
            "use-assert-isfalse-not-asserterror-for-boolean-checks",
        ],
    ),
    "ui": (
        "articles",
        [
            "default-descending-sort-on-historical-pages",
            "page-design-must-match-bc-page-type-conventions",
            "page-client-expression-must-not-use-in-list",
            "rolecenter-permission-gating-must-use-accessbypermission",
        ],
    ),
    "upgrade": (
        "articles",
        [
            "initvalue-does-not-update-existing-rows",
            "upgrade-tag-logic-must-not-nest-deeply",
            "no-changecompany-in-upgrade",
        ],
    ),
    "web-services": (
        "articles",
        [
            "expose-systemid-as-the-api-key",
            "handle-httpclient-platform-failure-before-response-access",
            "check-http-status-before-consuming-response-body",
            "check-json-null-before-converting-values",
            "format-exchanged-values-with-standard-format-9",
            "api-page-least-privilege-write-access",
        ],
    ),
}
CONTEXTS = {"finance": FINANCE_CONTEXT, "upgrade": UPGRADE_CONTEXT}


def _without(selection: dict[str, tuple[str, list[str]]], domain: str, *names: str) -> None:
    member, listed = selection[domain]
    selection[domain] = (member, [name for name in listed if name not in names])


def _continia_0867171() -> dict[str, tuple[str, list[str]]]:
    chosen = {domain: (member, list(names)) for domain, (member, names) in RS_TVE.items()}
    _without(chosen, "data-modeling", "delete-master-data-with-trigger", "master-data-must-be-inserted-with-trigger")
    _without(chosen, "error-handling", "declined-confirm-must-abort-not-partially-apply")
    chosen["events"] = ("article", ["reset-ishandled-only-when-the-value-can-carry-over"])
    _without(
        chosen,
        "performance",
        "use-get-instead-of-findfirst-on-full-primary-key",
        "use-grouped-query-for-distinct-values-and-duplicates",
    )
    chosen["privacy"] = ("article", ["no-pii-in-telemetry-message-string"])
    _without(chosen, "style", "mutating-procedure-for-a-page-caller-takes-var-record")
    _without(chosen, "upgrade", "no-changecompany-in-upgrade")
    return chosen


def _curabis_1d140cb() -> dict[str, tuple[str, list[str]]]:
    chosen = {domain: (member, list(names)) for domain, (member, names) in RS_TVE.items()}
    names = chosen["data-modeling"][1]
    names.insert(
        names.index("table-design-must-match-bc-table-type-conventions") + 1,
        "tablerelation-field-length-must-match-related-field",
    )
    chosen["testing"][1].append("recordref-open-temp-parameter-defeats-real-table-checks")
    return chosen


def short_fork_selections() -> dict[str, dict[str, tuple[str, list[str]]]]:
    """The two short manifests of §12.2 (Continia@bec8890, demiliani@75f3863): `article` in most domains."""
    performance = [RS_TVE["performance"][1][0]] + [n for n in RS_TVE["performance"][1] if n.startswith("job-queue-")]
    continia = {domain: RS_TVE[domain] for domain in ("agents", "breaking-changes", "interfaces", "query", "reporting")}
    continia.update(
        {
            "events": ("article", ["reset-ishandled-only-when-the-value-can-carry-over"]),
            "performance": ("articles", [*performance, "store-scheduled-task-id-to-avoid-duplicate-tasks"]),
            "privacy": ("article", ["no-pii-in-telemetry-message-string"]),
            "scm": ("articles", RS_TVE["scm"][1][:9]),
            "style": ("articles", RS_TVE["style"][1][:2]),
            "telemetry": RS_TVE["telemetry"],
            "testing": ("article", ["ui-handlers-in-tests"]),
            "upgrade": ("article", ["initvalue-does-not-update-existing-rows"]),
            "web-services": ("article", ["expose-systemid-as-the-api-key"]),
        }
    )
    demiliani = {domain: value for domain, value in continia.items() if domain not in ("query", "scm")}
    demiliani["style"] = ("article", ["label-comment-explains-placeholders"])
    return {"Continia@bec8890": continia, "demiliani@75f3863": demiliani}


def fork_selections() -> dict[str, dict[str, tuple[str, list[str]]]]:
    """The override selections of the fork commits whose differences §12.2 spells out fully (no custom layer)."""
    rs_tve_95a6052 = {domain: (member, list(names)) for domain, (member, names) in RS_TVE.items()}
    rs_tve_95a6052["ui"][1].append("dynamic-visible-on-fields-vs-groups")
    demiliani = _continia_0867171()
    _without(demiliani, "data-modeling", "document-line-prices-follow-prices-including-vat")
    performance = list(RS_TVE["performance"][1])
    performance.remove("use-grouped-query-for-distinct-values-and-duplicates")
    demiliani["performance"] = ("articles", performance)
    demiliani["ui"] = ("articles", RS_TVE["ui"][1][:2])
    rodneyha = _continia_0867171()
    rodneyha["events"] = ("articles", RS_TVE["events"][1][:2])
    rodneyha["performance"] = ("articles", performance)
    rodneyha["upgrade"] = RS_TVE["upgrade"]
    return {
        "rs-tve@d1022f4": {domain: (member, list(names)) for domain, (member, names) in RS_TVE.items()},
        "rs-tve@95a6052": rs_tve_95a6052,
        "Continia@0867171": _continia_0867171(),
        "Curabis@1d140cb": _curabis_1d140cb(),
        "demiliani@34424c3": demiliani,
        "rodneyha@68fb6b1": rodneyha,
    }


def cut_down(selection: dict[str, tuple[str, list[str]]], listing: Listing) -> dict[str, Any]:
    """The manifest of `selection` keeping only leaf domains of `listing` and names paired there (a domain left with
    no name keeps no override)."""
    leaves = {leaf.domain for leaf in discover_leaves(listing)}
    overrides: dict[str, Any] = {}
    for domain, (member, names) in selection.items():
        if domain not in leaves:
            continue
        paired = {article.slug for article in paired_articles(listing, domain)}
        kept = [name for name in names if name in paired]
        if not kept:
            continue
        override: dict[str, Any] = {member: kept[0] if member == "article" else kept}
        if domain in CONTEXTS:
            override["context"] = CONTEXTS[domain]
        overrides[domain] = override
    return {
        "version": 2,
        "selection": "first-paired-al-article",
        "minimumExpectedRecall": 1.0,
        "minimumCleanRate": 1.0,
        "overrides": overrides,
        "coverageWaivers": [],
    }
