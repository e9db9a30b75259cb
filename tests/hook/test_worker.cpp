#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "tdbg/hook/worker.hpp"

using namespace tdbg;

namespace {
struct fake_env {
    std::map<std::string, std::string> vars;
    const char* operator()(const char* name) const {
        auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    }
};
} // namespace

TEST_CASE("worker detection follows the launchers' variables in order") {
    CHECK(detect_worker(fake_env{}).name == "worker_0");
    CHECK(detect_worker(fake_env{}).size == 1);

    const auto mpi = detect_worker(fake_env{{{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"RANK", "1"}, {"WORLD_SIZE", "2"}}});
    CHECK(mpi.name == "worker_3");
    CHECK(mpi.size == 4);
    CHECK(mpi.source == "OMPI_COMM_WORLD_RANK");

    const auto pmi = detect_worker(fake_env{{{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}});
    CHECK(pmi.name == "worker_1");
    const auto torchrun = detect_worker(fake_env{{{"RANK", "5"}, {"WORLD_SIZE", "8"}}});
    CHECK(torchrun.rank == 5);
    CHECK(torchrun.size == 8);
    const auto slurm = detect_worker(fake_env{{{"SLURM_PROCID", "2"}, {"SLURM_NPROCS", "3"}}});
    CHECK(slurm.name == "worker_2");
    CHECK(slurm.size == 3);
    const auto slurm_tasks = detect_worker(fake_env{{{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}}});
    CHECK(slurm_tasks.name == "worker_1");
    CHECK(slurm_tasks.size == 4);
    CHECK(slurm_tasks.source == "SLURM_PROCID");
}

TEST_CASE("worker detection rejects inconsistent environments") {
    CHECK_THROWS_WITH(detect_worker(fake_env{{{"RANK", "1"}}}), Catch::Contains("WORLD_SIZE"));
    CHECK_THROWS_WITH(detect_worker(fake_env{{{"RANK", "x1"}, {"WORLD_SIZE", "2"}}}), Catch::Contains("RANK='x1'"));
    CHECK_THROWS_AS(detect_worker(fake_env{{{"RANK", "2"}, {"WORLD_SIZE", "2"}}}), config_error);
    CHECK_THROWS_AS(detect_worker(fake_env{{{"PMI_RANK", "0"}, {"PMI_SIZE", "0"}}}), config_error);
}
