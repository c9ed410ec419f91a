#include "tools/options.h"

#include <iostream>

#include "core/comma_list.h"
#include "core/error.h"
#include "core/pooling.h"
#include "runtime/parse_number.h"

namespace po = boost::program_options;

namespace qrnn::cli {

std::vector<std::string> split_list(const std::string &option, const std::string &text) {
    try {
        return split_comma_list(text, "item");
    } catch (const Error &) {
        fail("--", option, ": empty item in list '", text, "'");
    }
}

std::vector<int64_t> parse_int_list(const std::string &option, const std::string &text) {
    std::vector<int64_t> values;
    for (auto &item : split_list(option, text)) {
        try {
            values.push_back(parse_int(item));
        } catch (const Error &) {
            fail("--", option, ": '", item, "' is not an integer");
        }
    }
    return values;
}

double parse_double(const std::string &option, const std::string &text) {
    try {
        return parse_finite(text);
    } catch (const Error &) {
        fail("--", option, ": '", text, "' is not a finite number");
    }
}

bool parse_options(const std::string &usage, const po::options_description &desc, const std::vector<std::string> &args,
                   po::variables_map &vm, const po::positional_options_description *positional) {
    try {
        po::command_line_parser parser(args);
        parser.options(desc);
        if (positional) parser.positional(*positional);
        po::store(parser.run(), vm);
        if (vm.count("help")) {
            std::cout << usage << "\n\n" << desc << "\n";
            return false;
        }
        po::notify(vm);
    } catch (const po::error &e) {
        fail(e.what());
    }
    return true;
}

const PoolingVariant &pooling_option(const boost::program_options::variables_map &vm) {
    return find_pooling(vm["pooling"].as<std::string>());
}

}  // namespace qrnn::cli
