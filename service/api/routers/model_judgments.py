"""A model judge over REST (issue 10 §4): an operator asks an OpenAI-compatible model, under the deployment's
target allow-list, to judge a run's replies against named criteria; its determinations and its failures
(execution errors of kind ``epo:JudgeFailure``) are recorded as one batch."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from ...core.auth import require
from ...core.config import Credential
from ...core.errors import Unprocessable
from ...core.roles import EVALUATION_OPERATOR
from ...judgments.model_judge import judge_run_with_model
from ...runs.jobs import TargetSpec, build_target
from ...runs.targets import OpenAICompatible
from ..deps import GraphsDep, SettingsDep, SignerDep, credential
from ..models_runs import OpenAITargetBody

router = APIRouter(prefix="/evaluations/{evaluation_id}", tags=["determinations and attestations"])

CredentialDep = Annotated[Credential | None, Depends(credential)]


class ModelJudgmentsBody(BaseModel):
    """The judge's model (``parameters.temperature`` defaults to 0, the only value taken; omitted: the deployment's
    ``CAIE_MODEL_JUDGE_*`` settings) and the criteria, by identifier, to judge the run's replies against."""

    model_config = ConfigDict(extra="forbid")

    target: OpenAITargetBody | None = None
    criteria: Annotated[list[Annotated[str, Field(min_length=1, max_length=200)]], Field(min_length=1, max_length=100)]


@router.post(
    "/runs/{number}/model-judgments",
    status_code=201,
    summary="Have a model judge the run's replies against named criteria (evaluation operator)",
)
async def post_model_judgments(
    evaluation_id: str,
    number: int,
    body: ModelJudgmentsBody,
    graphs: GraphsDep,
    settings: SettingsDep,
    agent: CredentialDep,
    signer: SignerDep,
) -> JSONResponse:
    operator = require(agent, EVALUATION_OPERATOR)
    given = body.target
    if given is None:
        if not (settings.model_judge_base_url and settings.model_judge_model):
            raise Unprocessable(
                "name the judge's target, or configure CAIE_MODEL_JUDGE_BASE_URL and CAIE_MODEL_JUDGE_MODEL"
            )
        given = OpenAITargetBody(
            kind="openai-compatible",
            base_url=settings.model_judge_base_url,
            model=settings.model_judge_model,
            api_key_env=settings.model_judge_api_key_env,
        )
    spec = TargetSpec(
        "openai-compatible",
        base_url=given.base_url,
        model=given.model,
        parameters={"temperature": 0, **given.parameters},
        system=given.system,
        system_instructions=given.system_instructions,
        api_key_env=given.api_key_env,
    )
    key_envs = [*settings.key_envs, *([settings.model_judge_api_key_env] if settings.model_judge_api_key_env else [])]
    target = build_target(spec, settings.run_target_allowlist, key_envs)
    assert isinstance(target, OpenAICompatible)  # an openai-compatible spec builds that adapter
    made, failures = await run_in_threadpool(
        judge_run_with_model, graphs, evaluation_id, number, target, body.criteria, operator, signer
    )
    return JSONResponse({"determinations": made, "failures": failures}, status_code=201)
